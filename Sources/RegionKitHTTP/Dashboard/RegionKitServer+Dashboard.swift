import Hummingbird

extension RegionKitServer {
    /// `/` (the dashboard page) and its script and style, all compiled into the binary.
    func addDashboardRoutes(to router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in Self.text(DashboardPage.html, contentType: "text/html; charset=utf-8") }
        router.get("/index.html") { _, _ in Self.text(DashboardPage.html, contentType: "text/html; charset=utf-8") }
        router.get("/assets/app.js") { _, _ in Self.text(DashboardScript.source, contentType: "text/javascript; charset=utf-8") }
        router.get("/assets/app.css") { _, _ in Self.text(DashboardStyle.source, contentType: "text/css; charset=utf-8") }
    }
}
