import RegionKit
import Synchronization

/// Forwards every manager event to an ``EventPrinter`` until closed.
final class PrintingDelegate: LocationManagerDelegate, Sendable {
    private let printer: EventPrinter
    private let open = Atomic<Bool>(true)

    init(printer: EventPrinter) { self.printer = printer }

    func close() { open.store(false, ordering: .sequentiallyConsistent) }

    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        guard open.load(ordering: .sequentiallyConsistent) else { return }
        printer.print(.location(event))
    }
}
