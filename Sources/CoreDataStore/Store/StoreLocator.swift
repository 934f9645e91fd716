import Foundation

/// Finds SwiftData and Core Data stores below a folder: the simulator's app containers, App Group
/// containers, or any folder (a tree copied from a Mac reads the same on Linux). Each store is
/// read through a snapshot (`StoreSnapshot`), so the source and its `-wal` and `-shm` are left
/// byte for byte as they were, and its model is told by the hashes in its metadata.
package enum StoreLocator {
    /// The plist a simulator or device writes at the top of every data container, naming the
    /// app (or App Group) it belongs to under `MCMMetadataIdentifier`.
    public static let containerMetadataFileName = ".com.apple.mobile_container_manager.metadata.plist"

    public struct FoundStore: Sendable, Encodable {
        public var path: String
        /// The container's app or App Group identifier, when the store is inside one.
        public var bundleIdentifier: String?
        /// "app" (a simulator or device app container), "app group", or nil (any folder).
        public var container: String?
        public var versionIdentifiers: [String]
        /// The first 12 hex digits of the model's checksum (SHA-256 of the entity version hashes in
        /// name order): stores of one physical model share it, whatever their version identifier.
        public var modelHash: String
        public var entities: Int
        /// The store's file with its `-wal` and `-shm`, in bytes.
        public var bytes: Int64
        /// Committed frames in `-wal` that the main file does not hold yet (0 without a WAL).
        public var walFrames: Int
        public var hasWAL: Bool
    }

    /// A file below the folder that looked like a store and could not be read as one.
    public struct Unreadable: Sendable, Encodable {
        public var path: String
        public var reason: String
    }

    public struct Result: Sendable, Encodable {
        public var stores: [FoundStore]
        public var unreadable: [Unreadable]
    }

    /// Every Core Data store below each of `roots`, in path order; with `bundleIdentifier`, only
    /// those in that app's (or App Group's) container. Symbolic links are not followed, so the
    /// search stays below the roots.
    public static func locate(below roots: [URL], bundleIdentifier: String? = nil) throws -> Result {
        var stores: [FoundStore] = []
        var unreadable: [Unreadable] = []
        for root in roots {
            guard FileKind.of(root.path) == .folder else { throw StoreError.notFound(path: root.path) }
            try locate(below: root, bundleIdentifier: bundleIdentifier, stores: &stores, unreadable: &unreadable)
        }
        return Result(stores: stores, unreadable: unreadable)
    }

    private static func locate(
        below root: URL, bundleIdentifier: String?, stores: inout [FoundStore], unreadable: inout [Unreadable]
    ) throws {
        for file in candidateFiles(below: root) {
            let container = containerIdentity(of: file, below: root)
            if let bundleIdentifier, container?.identifier != bundleIdentifier { continue }
            do {
                stores.append(try describe(file, container: container))
            } catch StoreError.notACoreDataStore {
                continue  // another SQLite database (a cache, a cookie jar): not a store
            } catch {
                unreadable.append(Unreadable(path: file.path, reason: (error as? LocalizedError)?.errorDescription ?? "\(error)"))
            }
        }
    }

    /// Regular files that start with SQLite's header, sidecars and journals left out.
    private static func candidateFiles(below root: URL) -> [URL] {
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey], options: [])
        else { return [] }
        var files: [URL] = []
        for case let url as URL in enumerator {
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey])
            guard values?.isSymbolicLink != true, values?.isRegularFile == true else { continue }
            let name = url.lastPathComponent
            if CoreDataSQL.storeFileSuffixes.dropFirst().contains(where: { name.hasSuffix($0) }) || name.hasSuffix("-journal") { continue }
            if FileKind.of(url.path) == .sqliteStore { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }

    private struct ContainerIdentity {
        var identifier: String
        var kind: String
    }

    /// The identifier in the metadata plist of the nearest enclosing container folder below root.
    private static func containerIdentity(of file: URL, below root: URL) -> ContainerIdentity? {
        var folder = file.deletingLastPathComponent().standardizedFileURL
        let top = root.standardizedFileURL.path
        while folder.path.hasPrefix(top) {
            let plist = folder.appendingPathComponent(containerMetadataFileName)
            if let data = try? Data(contentsOf: plist),
                let object = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                let identifier = object["MCMMetadataIdentifier"] as? String
            {
                let kind = folder.deletingLastPathComponent().lastPathComponent == "AppGroup" ? "app group" : "app"
                return ContainerIdentity(identifier: identifier, kind: kind)
            }
            if folder.path == top { break }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    private static func describe(_ file: URL, container: ContainerIdentity?) throws -> FoundStore {
        let snapshot = try StoreSnapshot(storeAt: file)
        let metadata = try snapshot.read { try StoreReader.metadata($0, path: file.path) }
        let sizes = CoreDataSQL.storeFileSuffixes.map { suffix -> Int64 in
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path + suffix)
            return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return FoundStore(
            path: file.path, bundleIdentifier: container?.identifier, container: container?.kind,
            versionIdentifiers: metadata.versionIdentifiers, modelHash: metadata.modelHash,
            entities: metadata.entityHashes.count, bytes: sizes.reduce(0, +), walFrames: snapshot.walFrameCount,
            hasWAL: FileManager.default.fileExists(atPath: file.path + "-wal"))
    }
}
