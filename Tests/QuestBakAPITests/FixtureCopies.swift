import Foundation

/// A folder of its own for one test, and copies of the bundled fixture stores in it: a committed
/// fixture is never opened in place (SQLite would checkpoint its WAL on close).
struct FixtureCopies {
    let folder: URL

    /// The repository's Fixtures/ folder.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fixtures").standardizedFileURL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("questbak-api-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A copy of the fixture store at `path` (below Fixtures/) as `<name>/default.store`, with its
    /// -wal and -shm or not.
    func copy(_ path: String, as name: String, withWAL: Bool = true) throws -> URL {
        let source = Self.fixtures.appendingPathComponent(path)
        let store = folder.appendingPathComponent(name).appendingPathComponent("default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        for suffix in withWAL ? ["", "-wal", "-shm"] : [""]
        where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: store.path + suffix)
        }
        return store
    }
}
