import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension PostgresServer {
    /// Turns TLS on for the next (re)start: a CA (made once, in the server's directory) and a
    /// server certificate it signs for `subjectAltName` (`IP:127.0.0.1`, `DNS:db.example`; a new
    /// pair at each call), with `openssl` (P-256, 2 days). Returns the CA's PEM file, for a
    /// client's `sslrootcert`.
    ///
    /// ```swift
    /// let ca = try server.enableTLS(subjectAltName: "IP:127.0.0.1")
    /// try await server.start()
    /// ```
    @discardableResult
    public func enableTLS(subjectAltName: String) throws -> String {
        guard let openssl = MosquittoBroker.openssl else { throw TestFailure("openssl not found") }
        let d = directory
        let ca = "\(d)/ca.crt"
        if !FileManager.default.fileExists(atPath: ca) {
            _ = try MosquittoBroker.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                  "-keyout", "\(d)/ca.key", "-out", ca, "-days", "2", "-subj", "/CN=RegionKit PostgreSQL test CA",
                                                  "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        }
        let name = "server-\(UUID().uuidString.prefix(8))"
        _ = try MosquittoBroker.run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                              "-keyout", "\(d)/\(name).key", "-out", "\(d)/\(name).csr", "-subj", "/CN=regionkit test server"])
        try ("subjectAltName=\(subjectAltName)\nbasicConstraints=CA:FALSE\n" +
             "keyUsage=critical,digitalSignature,keyAgreement\nextendedKeyUsage=serverAuth\n")
            .write(toFile: "\(d)/\(name).ext", atomically: true, encoding: .utf8)
        _ = try MosquittoBroker.run(openssl, ["x509", "-req", "-in", "\(d)/\(name).csr", "-CA", ca, "-CAkey", "\(d)/ca.key",
                                              "-CAcreateserial", "-out", "\(d)/\(name).crt", "-days", "2", "-extfile", "\(d)/\(name).ext"])
        // The server refuses a key others can read; owned by the server's user when run as root.
        guard chmod("\(d)/\(name).key", 0o600) == 0 else { throw TestFailure("chmod \(name).key failed: errno \(errno)") }
        if Self.runsAsRoot, let owner = Self.postgresUser {
            for file in ["\(name).key", "\(name).crt", "ca.crt"] { _ = chown("\(d)/\(file)", owner.uid, owner.gid) }
        }
        settings = settings.filter { !$0.hasPrefix("ssl") } + ["ssl=on", "ssl_cert_file=\(d)/\(name).crt", "ssl_key_file=\(d)/\(name).key"]
        return ca
    }
}
