import Foundation
import RegionKitCore

extension GroundTruthCatalog {
    /// The README of shared/fixtures/beacon-runs as data: which beacon was in which room when,
    /// per recording. Compiled into the module (it used to be a resource bundle that had to stay
    /// beside the executable: a `regionkit` binary installed alone could not run `eval`).
    ///
    /// ```swift
    /// let truth = try GroundTruthCatalog.beaconRuns().truth(forRecording: "2015-03-07-office.json.gz")
    /// ```
    public static func beaconRuns() throws -> GroundTruthCatalog {
        try GroundTruthCatalog(data: Data(beaconRunsJSON.utf8), source: "the beacon-runs ground truth")
    }

    /// The catalogue's JSON (the format ``init(data:source:)`` reads; edit it here).
    static let beaconRunsJSON = ##"""
{
  "about": "What the README of the gateway recordings (shared/fixtures/beacon-runs/README.md, from the RaspberryPiBeaconParser project) says really happened: which beacons never moved and where they sat, and the rooms the carried beacons were in, with times. Times are the README's rough wall-clock times (PST, UTC-8); between leaving and coming back to the computer the beacon was being carried (room null: a transition, not scored). Each row quotes the README sentence it comes from; what the README tells without times is in notScored. Beacons are UUID:MAJOR:MINOR.",
  "recordings": [
    {
      "file": "TwoScannersRun1-2015-03-03.json.gz",
      "readme": "TwoScannersRun#1-2015-03-03: \"beginning at around Tue Mar 3 13:16:10 PST 2015 and ending around Tue Mar 3 13:42:30 PST 2015\". Beacon N is identified by its minor (all share one UUID).",
      "stationary": [
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:18:2",
          "scanner": "Room201",
          "readme": "Beacon 2 {DAF246CE836311E4B116123B93F75CBA,18,2} remained in Room201 and thus closest to that scanner the entire time."
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:0:3",
          "scanner": "Room201",
          "readme": "Beacon 3 {DAF246CE836311E4B116123B93F75CBA,0,3} was situated on top of the Room201 scanner the entire time."
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:4",
          "scanner": "Room202",
          "readme": "Beacon 4 {DAF246CE836311E4B116123B93F75CBA,1,4} was situated on top of the Room202 scanner the entire time."
        }
      ],
      "periods": [],
      "notScored": [
        "beacon 1 {14,1}: \"It first started nearest to Room201, then travels between Room201 and Room202, then into Room202 where it sat for a couple of minutes. It travels around the two rooms and away from them until it returns walking first past Room202 and ending up in Room201 until the data ends.\" The README gives no times for these moves, so its room timeline is not scored (only its exits and flaps are measured)."
      ]
    },
    {
      "file": "FourScannersRun1-2015-03-07.json.gz",
      "readme": "FourScannersRun#1-2015-03-07. The README says the carried beacons have \"a major value equal to the beacon number (1,2,5,6,7,8)\", but the file's counts show the beacon number is the minor (major 14 = minor 1: 3212 sightings, major 18 = minor 2: 4225, major 1 = minors 5-8), as in the later runs (\"a minor value equal to the beacon number\"). \"The first time is roughly when the event begins, and the time after the description is roughly when it ends.\"",
      "stationary": [
        {
          "beacon": "DAF246CE-F201-11E4-B116-123B93F75CBA:201:20",
          "scanner": "Room201",
          "readme": "Each scanner has a beacon next to it that has a uuid of the form DAF246CEFRRR11E4B116123B93F75CBA where RRR is the room number. These beacons have a major value equal to the room number"
        },
        {
          "beacon": "DAF246CE-F202-11E4-B116-123B93F75CBA:202:20",
          "scanner": "Room202",
          "readme": "Each scanner has a beacon next to it that has a uuid of the form DAF246CEFRRR11E4B116123B93F75CBA where RRR is the room number. These beacons have a major value equal to the room number"
        },
        {
          "beacon": "DAF246CE-F203-11E4-B116-123B93F75CBA:203:20",
          "scanner": "Room203",
          "readme": "Each scanner has a beacon next to it that has a uuid of the form DAF246CEFRRR11E4B116123B93F75CBA where RRR is the room number. These beacons have a major value equal to the room number"
        },
        {
          "beacon": "DAF246CE-F204-11E4-B116-123B93F75CBA:204:20",
          "scanner": "Room204",
          "readme": "Each scanner has a beacon next to it that has a uuid of the form DAF246CEFRRR11E4B116123B93F75CBA where RRR is the room number. These beacons have a major value equal to the room number"
        }
      ],
      "periods": [
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:14:1",
          "start": "2015-03-07T11:46:11-08:00",
          "end": "2015-03-07T11:46:26-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:14:1",
          "start": "2015-03-07T11:46:26-08:00",
          "end": "2015-03-07T11:47:24-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:46:26 PST 2015: 1 and 2 go to 204; Sat Mar  7 11:47:24 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:14:1",
          "start": "2015-03-07T11:47:24-08:00",
          "end": "2015-03-07T11:52:16-08:00",
          "room": "Room204",
          "readme": "Sat Mar  7 11:46:26 PST 2015: 1 and 2 go to 204; Sat Mar  7 11:47:24 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:14:1",
          "start": "2015-03-07T11:52:16-08:00",
          "end": "2015-03-07T11:53:39-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:52:16 PST 2015: 1 goes from 204 to 202 to meet 5, then both return to 201; Sat Mar  7 11:53:39 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:14:1",
          "start": "2015-03-07T11:53:39-08:00",
          "end": "2015-03-07T11:58:43-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:52:16 PST 2015: 1 goes from 204 to 202 to meet 5, then both return to 201; Sat Mar  7 11:53:39 PST 2015 / Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:18:2",
          "start": "2015-03-07T11:46:11-08:00",
          "end": "2015-03-07T11:46:26-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:18:2",
          "start": "2015-03-07T11:46:26-08:00",
          "end": "2015-03-07T11:47:24-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:46:26 PST 2015: 1 and 2 go to 204; Sat Mar  7 11:47:24 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:18:2",
          "start": "2015-03-07T11:47:24-08:00",
          "end": "2015-03-07T11:54:48-08:00",
          "room": "Room204",
          "readme": "Sat Mar  7 11:46:26 PST 2015: 1 and 2 go to 204; Sat Mar  7 11:47:24 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:18:2",
          "start": "2015-03-07T11:54:48-08:00",
          "end": "2015-03-07T11:55:45-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:54:48 PST 2015: 2 returns to 201; Sat Mar  7 11:55:45 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:18:2",
          "start": "2015-03-07T11:55:45-08:00",
          "end": "2015-03-07T11:58:43-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:54:48 PST 2015: 2 returns to 201; Sat Mar  7 11:55:45 PST 2015 / Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:5",
          "start": "2015-03-07T11:46:11-08:00",
          "end": "2015-03-07T11:48:23-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:5",
          "start": "2015-03-07T11:48:23-08:00",
          "end": "2015-03-07T11:49:40-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:48:23 PST 2015: 5 and 6 go to 202; Sat Mar  7 11:49:40 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:5",
          "start": "2015-03-07T11:49:40-08:00",
          "end": "2015-03-07T11:52:16-08:00",
          "room": "Room202",
          "readme": "Sat Mar  7 11:48:23 PST 2015: 5 and 6 go to 202; Sat Mar  7 11:49:40 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:5",
          "start": "2015-03-07T11:52:16-08:00",
          "end": "2015-03-07T11:53:39-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:52:16 PST 2015: 1 goes from 204 to 202 to meet 5, then both return to 201; Sat Mar  7 11:53:39 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:5",
          "start": "2015-03-07T11:53:39-08:00",
          "end": "2015-03-07T11:58:43-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:52:16 PST 2015: 1 goes from 204 to 202 to meet 5, then both return to 201; Sat Mar  7 11:53:39 PST 2015 / Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:6",
          "start": "2015-03-07T11:46:11-08:00",
          "end": "2015-03-07T11:48:23-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:6",
          "start": "2015-03-07T11:48:23-08:00",
          "end": "2015-03-07T11:49:40-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:48:23 PST 2015: 5 and 6 go to 202; Sat Mar  7 11:49:40 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:6",
          "start": "2015-03-07T11:49:40-08:00",
          "end": "2015-03-07T11:57:06-08:00",
          "room": "Room202",
          "readme": "Sat Mar  7 11:48:23 PST 2015: 5 and 6 go to 202; Sat Mar  7 11:49:40 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:6",
          "start": "2015-03-07T11:57:06-08:00",
          "end": "2015-03-07T11:58:20-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:57:06 PST 2015: 6 goes to 203 to meet 8, then both return to 201; Sat Mar  7 11:58:20 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:6",
          "start": "2015-03-07T11:58:20-08:00",
          "end": "2015-03-07T11:58:43-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:57:06 PST 2015: 6 goes to 203 to meet 8, then both return to 201; Sat Mar  7 11:58:20 PST 2015 / Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:7",
          "start": "2015-03-07T11:46:11-08:00",
          "end": "2015-03-07T11:50:05-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:7",
          "start": "2015-03-07T11:50:05-08:00",
          "end": "2015-03-07T11:51:32-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:50:05 PST 2015: 7 and 8 go to 203; Sat Mar  7 11:51:32 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:7",
          "start": "2015-03-07T11:51:32-08:00",
          "end": "2015-03-07T11:55:53-08:00",
          "room": "Room203",
          "readme": "Sat Mar  7 11:50:05 PST 2015: 7 and 8 go to 203; Sat Mar  7 11:51:32 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:7",
          "start": "2015-03-07T11:55:53-08:00",
          "end": "2015-03-07T11:56:54-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:55:53 PST 2015: 7 returns to 201; Sat Mar  7 11:56:54 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:7",
          "start": "2015-03-07T11:56:54-08:00",
          "end": "2015-03-07T11:58:43-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:55:53 PST 2015: 7 returns to 201; Sat Mar  7 11:56:54 PST 2015 / Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:8",
          "start": "2015-03-07T11:46:11-08:00",
          "end": "2015-03-07T11:50:05-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:46:11 PST 2015: All beacons start in 201"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:8",
          "start": "2015-03-07T11:50:05-08:00",
          "end": "2015-03-07T11:51:32-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:50:05 PST 2015: 7 and 8 go to 203; Sat Mar  7 11:51:32 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:8",
          "start": "2015-03-07T11:51:32-08:00",
          "end": "2015-03-07T11:57:06-08:00",
          "room": "Room203",
          "readme": "Sat Mar  7 11:50:05 PST 2015: 7 and 8 go to 203; Sat Mar  7 11:51:32 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:8",
          "start": "2015-03-07T11:57:06-08:00",
          "end": "2015-03-07T11:58:20-08:00",
          "room": null,
          "readme": "Sat Mar  7 11:57:06 PST 2015: 6 goes to 203 to meet 8, then both return to 201; Sat Mar  7 11:58:20 PST 2015"
        },
        {
          "beacon": "DAF246CE-8363-11E4-B116-123B93F75CBA:1:8",
          "start": "2015-03-07T11:58:20-08:00",
          "end": "2015-03-07T11:58:43-08:00",
          "room": "Room201",
          "readme": "Sat Mar  7 11:57:06 PST 2015: 6 goes to 203 to meet 8, then both return to 201; Sat Mar  7 11:58:20 PST 2015 / Sat Mar  7 11:58:43 PST 2015: all scanners stopped"
        }
      ],
      "notScored": [
        "\"1 goes from 204 to 202 to meet 5\": how long beacon 1 was in 202 is not told, so the whole trip (11:52:16–11:53:39) is a transition; the same for beacon 6's visit to 203 (11:57:06–11:58:20)."
      ]
    },
    {
      "file": "FourScannersBeacon5Run1-2015-03-13.json.gz",
      "readme": "FourScannersBeacon5Run1-2015-03-13: \"A test run of beacon with minor id 5 that walks between the room 1-4 scanners.\" No times, no order of rooms, no stationary beacon.",
      "stationary": [],
      "periods": [],
      "notScored": [
        "\"A test run of beacon with minor id 5 that walks between the room 1-4 scanners.\": no times and no order of the rooms, so neither room assignment nor false exits can be scored (only exits and flaps are measured)."
      ]
    }
  ]
}
"""##
}
