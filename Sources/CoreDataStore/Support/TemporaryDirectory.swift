import Foundation

/// Private working folders under the system temporary directory (snapshots, staged members, work
/// files). Each is announced to `Hooks.temporaryFile`, so an interrupted process can remove it,
/// and its name carries the process id, so a later run can remove what a killed one left.
package enum TemporaryDirectory {
    /// A new private directory (mode 0700), named `<prefix>-<pid>.XXXXXX`.
    public static func create(prefix: String, in parent: URL? = nil) throws -> URL {
        let base = parent ?? FileManager.default.temporaryDirectory
        var template = Array(base.appendingPathComponent("\(prefix)-\(getpid()).XXXXXX").path.utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw OutputError.cannotCreate(path: base.path, reason: "a temporary folder: \(String(cString: strerror(errno)))")
        }
        let url = URL(fileURLWithPath: String(cString: result), isDirectory: true)
        TemporaryFiles.created(url.path)
        return url
    }

    /// Removes a directory made by `create`, with everything in it.
    public static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
        TemporaryFiles.removed(url.path)
    }

    /// Removes the folders `create` made for processes that no longer exist (killed before they
    /// could clean up); returns their paths.
    @discardableResult
    public static func removeStale(prefixes: [String], in parent: URL? = nil) -> [String] {
        remove(prefixes: prefixes, in: parent) { ProcessLiveness.hasExited($0) }
    }

    /// Removes the folders `create` made for this process, registered or not: what an interrupted
    /// run removes last, for a folder made while the interrupt was being handled.
    package static func removeOwn(prefixes: [String], in parent: URL? = nil) {
        let own = getpid()
        remove(prefixes: prefixes, in: parent) { $0 == own }
    }

    /// Removes the folders named `<prefix>-<pid>.XXXXXX` (as `create` names them) whose pid
    /// `matches`; returns their paths. A longer prefix must come before one it starts with.
    @discardableResult
    private static func remove(prefixes: [String], in parent: URL?, where matches: (Int32) -> Bool) -> [String] {
        let base = parent ?? FileManager.default.temporaryDirectory
        guard let names = DirectoryNames.starting(with: prefixes.map { $0 + "-" }, in: base.path) else { return [] }
        var removed: [String] = []
        for name in names {
            guard let prefix = prefixes.first(where: { name.hasPrefix($0 + "-") }) else { continue }
            let rest = name.dropFirst(prefix.count + 1)
            guard let dot = rest.firstIndex(of: "."), let pid = Int32(rest[..<dot]), matches(pid) else { continue }
            let path = base.appendingPathComponent(name).path
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append(path) }
        }
        return removed
    }
}
