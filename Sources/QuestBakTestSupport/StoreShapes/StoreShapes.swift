import Foundation
import GRDB

/// A shape of store that `export` accepts, made fresh for a test: the corpus test
/// (`ExportVerifyCorpusTests`) exports every shape with `--verify` and verifies the archive, so
/// that no archive export calls good is refused by import (issue #23).
public struct StoreShape: Sendable {
    /// Names the shape in a failing test's message.
    public var name: String
    /// True when the store holds what `import --validate` repairs (duplicates, orphans): its
    /// archive restores exactly without repairs, and `verify` says what a repair would change.
    public var needsRepairs: Bool
    /// Makes the store in the empty folder given and returns the store file's URL.
    public var make: @Sendable (URL) throws -> URL

    public init(_ name: String, needsRepairs: Bool = false, make: @escaping @Sendable (URL) throws -> URL) {
        self.name = name
        self.needsRepairs = needsRepairs
        self.make = make
    }
}

/// Every store shape the fixtures and generators make. Each area keeps its shapes in a file of
/// its own (`StoreShapes+<Area>.swift`); this list is the one place they are registered.
public enum StoreShapes {
    public static var all: [StoreShape] {
        fixtureStores + bookkeeping + tablesOnly + modelCaches + externalStorage + values
    }

    /// Every committed fixture store, copied with its folder (WAL and external storage included).
    public static var fixtureStores: [StoreShape] {
        let root = Repository.fixtures
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        let stores = enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".store") }.sorted()
        return stores.map { relative in
            StoreShape("Fixtures/\(relative)", needsRepairs: relative.hasPrefix("v1-anomalies/")) { folder in
                let source = root.appendingPathComponent(relative).deletingLastPathComponent()
                let copy = folder.appendingPathComponent("store")
                try FileManager.default.copyItem(at: source, to: copy)
                return copy.appendingPathComponent((relative as NSString).lastPathComponent)
            }
        }
    }

    /// A copy of the committed fixture folder `name` (its WAL and external storage included) in
    /// `folder`; returns the copied store.
    static func copy(_ name: String, into folder: URL) throws -> URL {
        let destination = folder.appendingPathComponent("store")
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(name), to: destination)
        return destination.appendingPathComponent("default.store")
    }

    /// Runs `change` on the store outside a transaction (journal mode and header pragmas need it),
    /// then closes it, so that the store is one file again (or its WAL folded in).
    static func change(_ store: URL, _ change: (Database) throws -> Void) throws {
        let queue = try DatabaseQueue(path: store.path)
        try queue.writeWithoutTransaction(change)
        try queue.close()
    }
}
