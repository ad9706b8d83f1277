import Foundation
import RegionKitTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A W3C WebDriver session on a chromedriver process (headless Debian chromium), spoken to over
/// loopback with ``LoopbackClient``: no Selenium needed.
final class WebDriver {
    static let elementKey = "element-6066-11e4-a52e-4f735466cecf"
    let driver: Process
    let client: LoopbackClient
    let session: String

    /// The chromium and chromedriver binaries, or why the browser tests cannot run.
    static var tools: (chromium: String, chromedriver: String)? {
        let chromium = ProcessInfo.processInfo.environment["REGIONKIT_CHROMIUM"] ?? "/usr/bin/chromium"
        let driver = ProcessInfo.processInfo.environment["REGIONKIT_CHROMEDRIVER"] ?? "/usr/bin/chromedriver"
        guard FileManager.default.isExecutableFile(atPath: chromium), FileManager.default.isExecutableFile(atPath: driver) else { return nil }
        return (chromium, driver)
    }

    /// - Parameter arguments: more chromium arguments (`--host-resolver-rules=…`).
    init(width: Int = 1280, height: Int = 900, arguments: [String] = []) throws {
        guard let tools = Self.tools else { throw LoopbackError.malformed("chromium or chromedriver missing") }
        let port = try FreePort.pick()
        driver = Process()
        driver.executableURL = URL(fileURLWithPath: tools.chromedriver)
        driver.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try driver.run()
        client = LoopbackClient(port: port, token: nil)
        // Wait for the driver to answer /status.
        let deadline = Date().addingTimeInterval(30)
        while (try? client.request("GET", "/status", timeout: 2))?.status != 200 {
            guard Date() < deadline else { driver.terminate(); throw LoopbackError.timeout }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": ["goog:chromeOptions": [
            "binary": tools.chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=\(width),\(height)",
                     "--no-first-run", "--disable-extensions", "--user-data-dir=\(TestScratch.directory.path)/rk-chromium-\(UUID().uuidString)"] + arguments,
        ]]]]
        let response = try client.request("POST", "/session", body: Self.text(capabilities), timeout: 120)
        guard let value = response.json["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            driver.terminate()
            throw LoopbackError.malformed("no WebDriver session: \(response.text)")
        }
        session = id
    }

    static func text(_ object: Any) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
    }

    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        let response = try client.request(method, "/session/\(session)\(path)", body: body.map(Self.text) ?? (method == "POST" ? "{}" : nil), timeout: 60)
        guard response.status == 200 else { throw LoopbackError.malformed("WebDriver \(method) \(path): \(response.status) \(response.text.prefix(300))") }
        return response.json["value"]
    }

    func open(_ url: String) throws { try command("POST", "/url", ["url": url]) }

    /// Runs `source` in the page; a refusal names the script first (a timeout said only "script
    /// timeout", and the test log cuts long lines: session 76's CI lost the name at the end).
    func script(_ source: String) throws -> Any? {
        let started = Date()
        do {
            return try command("POST", "/execute/sync", ["script": source, "args": []])
        } catch LoopbackError.malformed(let message) {
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            throw LoopbackError.malformed("script `\(source.prefix(160))` refused after \(seconds) s: \(message.prefix(200))")
        }
    }

    func element(_ css: String) throws -> String {
        guard let value = try command("POST", "/element", ["using": "css selector", "value": css]) as? [String: Any],
              let id = value[Self.elementKey] as? String else { throw LoopbackError.malformed("no element \(css)") }
        return id
    }

    func type(_ css: String, _ text: String) throws {
        let id = try element(css)
        try command("POST", "/element/\(id)/clear")
        try command("POST", "/element/\(id)/value", ["text": text])
    }

    func click(_ css: String) throws { try command("POST", "/element/\(try element(css))/click") }

    /// Opens the dashboard of the daemon on `port` and types `token` into the dialog the page
    /// shows when the API first answers 401 (the page then keeps it in sessionStorage).
    func openDashboard(port: Int, token: String) throws {
        try open("http://127.0.0.1:\(port)/")
        try wait(for: "document.querySelector('#token-dialog').open", timeout: 20)
        try type("#f-token", token)
        try click("#token-save")
    }

    func resize(width: Int, height: Int) throws { try command("POST", "/window/rect", ["width": width, "height": height]) }

    /// Writes a PNG screenshot of the viewport.
    func screenshot(to path: String) throws {
        guard let base64 = try command("GET", "/screenshot") as? String, let data = Data(base64Encoded: base64) else {
            throw LoopbackError.malformed("no screenshot")
        }
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Polls `condition` (a JavaScript expression) until it is true; returns the seconds it took.
    @discardableResult
    func wait(for condition: String, timeout: Double) throws -> Double {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if (try script("return !!(\(condition));")) as? Bool == true { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw LoopbackError.malformed("timed out after \(timeout) s waiting for \(condition)")
    }

    func quit() {
        _ = try? client.request("DELETE", "/session/\(session)", timeout: 20)
        // chromedriver does not always exit on SIGTERM; its browser is gone with the session.
        kill(driver.processIdentifier, SIGKILL)
        driver.waitUntilExit()
    }
}

enum FreePort {
    /// A port the kernel just handed out on 127.0.0.1 (closed again for the caller to bind).
    static func pick() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw LoopbackError.connect(errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
