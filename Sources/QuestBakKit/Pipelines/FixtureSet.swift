import CoreDataStore
import Foundation
import QuestBakArchive

/// A folder of migration fixtures kept as a managed set: each fixture a consistent copy of a real
/// store in a folder of its own (`<name>/default.store`, its external-storage files beside it),
/// named by the model it carries, and a small manifest (`questbak-fixtures.json`) that records
/// where each came from. The migration gate reads the folder with or without the manifest: the
/// manifest adds provenance, it does not gate.
package struct FixtureSet: Sendable {
    public static let manifestFileName = "questbak-fixtures.json"
    public static let storeFileName = "default.store"

    public struct Manifest: Codable, Sendable, Equatable {
        public var formatVersion = 1
        public var fixtures: [Entry] = []
        /// Stores of the app's intermediate models, oldest first, as paths relative to the set's
        /// folder: the gate migrates every fixture through each of them to the new build's model,
        /// as a staged migration does, without `--through` on every run.
        public var chain: [String]?

        public init() {}
    }

    /// What is known of one fixture: its provenance and the model it carries.
    public struct Entry: Codable, Sendable, Equatable {
        public var name: String
        /// The app's version that wrote the store, as the caller said it (not in the store).
        public var appVersion: String?
        /// When the fixture was added, ISO 8601, UTC.
        public var addedAt: String
        public var versionIdentifiers: [String]
        /// The first 12 hex digits of the model's checksum (`StoreLocator.FoundStore.modelHash`).
        public var modelHash: String
        /// Every entity's version hash, base64: the physical model, entity by entity.
        public var entityHashes: [String: String]
    }

    public struct Added: Sendable, Encodable {
        public var entry: Entry
        public var store: String
        public var externalFiles: Int
        /// A fixture of the same physical model already in the set, kept beside it on request.
        public var sameModelAs: String?
    }

    /// One fixture as `list` shows it.
    public struct Listing: Sendable, Encodable {
        public var name: String
        public var store: String
        public var versionIdentifiers: [String]
        public var modelHash: String
        public var entities: [String: Int]
        /// The golden dumps recorded beside the store, by target version.
        public var goldens: [String]
        /// The manifest's entry, when the fixture was added through it.
        public var entry: Entry?
    }

    public enum Failure: Error, LocalizedError, Equatable {
        /// The set already has a fixture of this physical model.
        case sameModel(fixture: String, modelHash: String)
        case nameTaken(name: String, folder: String)
        case invalidName(name: String)
        case unreadableManifest(path: String, reason: String)
        case chainOutsideSet(store: String, folder: String)
        case chainIsAFixture(store: String)

        public var errorDescription: String? {
            switch self {
            case .sameModel(let fixture, let hash):
                return "the set already has a fixture of this physical model (model \(hash)): \(fixture)"
            case .nameTaken(let name, let folder): return "\(folder): a fixture named \(name) is already there"
            case .invalidName(let name):
                return "\(UntrustedText.display(name)) is not a fixture name: letters, digits, '.', '-' and '_' only, 1 to 100 of them"
            case .unreadableManifest(let path, let reason): return "\(path): cannot read the fixtures manifest: \(reason)"
            case .chainOutsideSet(let store, let folder):
                return "\(store) is not inside the fixtures folder \(folder): a chain names stores the set keeps"
            case .chainIsAFixture(let store):
                return
                    "\(store) is where the gate looks for fixtures (one folder deep): keep a model store of the chain two folders deep, such as models/3.0.0/default.store"
            }
        }
    }

    public let folder: URL

    public init(folder: URL) {
        self.folder = folder
    }

    public var manifestURL: URL { folder.appendingPathComponent(Self.manifestFileName) }

    /// The manifest, or an empty one when the folder has none (a set made by hand).
    public func manifest() throws -> Manifest {
        guard FileManager.default.fileExists(atPath: manifestURL.path) else { return Manifest() }
        do {
            return try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))
        } catch {
            throw Failure.unreadableManifest(path: manifestURL.path, reason: error.localizedDescription)
        }
    }

    /// Copies the store at `store` into the set through a snapshot (the source, its `-wal` and
    /// `-shm` untouched; the WAL folded into the copy), with its external-storage files, under
    /// `name` or `<version>-<model hash>`. A store whose physical model a fixture already has is
    /// refused (`Failure.sameModel`) unless `keepSameModel`: one fixture per model is what a gate
    /// needs, and a second is usually a mistake.
    public func add(
        store: URL, name: String? = nil, appVersion: String? = nil, keepSameModel: Bool = false, addedAt: Date
    ) throws
        -> Added
    {
        let snapshot = try StoreSnapshot(storeAt: store)
        let metadata = try snapshot.read { try StoreReader.metadata($0, path: store.path) }
        let modelHash = metadata.modelHash
        let chosen = name ?? ((metadata.versionIdentifiers.first.map { $0 + "-" } ?? "") + modelHash)
        guard (1...100).contains(chosen.utf8.count), ExternalStorage.isSafeFileName(chosen), !chosen.hasPrefix(".") else {
            throw Failure.invalidName(name: chosen)
        }
        var manifest = try manifest()
        let existing = try listings(manifest: manifest)
        let sameModel = existing.first { $0.modelHash == modelHash }
        if let sameModel, !keepSameModel { throw Failure.sameModel(fixture: sameModel.name, modelHash: modelHash) }
        let destination = folder.appendingPathComponent(chosen)
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw Failure.nameTaken(name: chosen, folder: folder.path)
        }
        // Made under a temporary name and renamed into place whole, so an interrupted add leaves
        // no half fixture for the gate to read.
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let staging = folder.appendingPathComponent(".\(chosen).questbak-\(getpid())")
        TemporaryFiles.created(staging.path)
        defer {
            try? FileManager.default.removeItem(at: staging)
            TemporaryFiles.removed(staging.path)
        }
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
        let copy = staging.appendingPathComponent(Self.storeFileName)
        try snapshot.copyFiles(to: copy)
        try StorePlacement.syncFile(copy)
        let external = try ExternalStorage.files(forStore: store).files
        if !external.isEmpty {
            let target = ExternalStorage.folder(forStore: copy)
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            for file in external {
                try FileManager.default.copyItem(at: file.url, to: target.appendingPathComponent(file.name))
                try StorePlacement.syncFile(target.appendingPathComponent(file.name))
            }
        }
        guard rename(staging.path, destination.path) == 0 else {
            throw OutputError.cannotCreate(path: destination.path, reason: String(cString: strerror(errno)))
        }
        Durability.syncDirectory(of: destination)
        let entry = Entry(
            name: chosen, appVersion: appVersion,
            addedAt: DateText.iso8601(secondsSinceReferenceDate: addedAt.timeIntervalSinceReferenceDate.rounded(.down)) ?? "",
            versionIdentifiers: metadata.versionIdentifiers, modelHash: modelHash,
            entityHashes: metadata.entityHashes.mapValues { $0.base64EncodedString() })
        manifest.fixtures.append(entry)
        try write(manifest)
        return Added(
            entry: entry, store: destination.appendingPathComponent(Self.storeFileName).path, externalFiles: external.count,
            sameModelAs: sameModel?.name)
    }

    /// The manifest's chain as store URLs (empty without one).
    public func chain() throws -> [URL] {
        try (manifest().chain ?? []).map { folder.appendingPathComponent($0) }
    }

    /// Names the stores of the app's intermediate models, oldest first, once for every gate run.
    /// Each must be a Core Data store inside the set's folder, but not one of its fixtures (a
    /// fixture is gated; a model store only says what a step migrates to): keep them two folders
    /// deep, such as `models/3.0.0/default.store`. An empty list removes the chain.
    public func setChain(_ stores: [URL]) throws -> [String] {
        let top = folder.standardizedFileURL.resolvingSymlinksInPath().path + "/"
        var relative: [String] = []
        for store in stores {
            let path = store.standardizedFileURL.resolvingSymlinksInPath().path
            guard path.hasPrefix(top) else { throw Failure.chainOutsideSet(store: store.path, folder: folder.path) }
            let inside = String(path.dropFirst(top.count))
            guard inside.split(separator: "/").count > 2 else { throw Failure.chainIsAFixture(store: inside) }
            let snapshot = try StoreSnapshot(storeAt: store)
            _ = try snapshot.read { try StoreReader.metadata($0, path: store.path) }
            relative.append(inside)
        }
        var manifest = try manifest()
        manifest.chain = relative.isEmpty ? nil : relative
        try write(manifest)
        return relative
    }

    /// Every fixture store of the folder (each `<name>/<file>.store`, as the gate finds them).
    public func list() throws -> [Listing] {
        try listings(manifest: try manifest())
    }

    private func listings(manifest: Manifest) throws -> [Listing] {
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        var listings: [Listing] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where !name.hasPrefix(".") {
            let subfolder = folder.appendingPathComponent(name)
            guard FileKind.of(subfolder.path) == .folder else { continue }
            for file in try FileManager.default.contentsOfDirectory(atPath: subfolder.path).sorted() where file.hasSuffix(".store") {
                let store = subfolder.appendingPathComponent(file)
                let snapshot = try StoreSnapshot(storeAt: store)
                // Only the rows and versions are listed: no schema needs recognising.
                let inspection = try StoreInspection(snapshot: snapshot, candidates: [])
                let metadata = try snapshot.read { try StoreReader.metadata($0, path: store.path) }
                let goldens = try FileManager.default.contentsOfDirectory(atPath: subfolder.path).sorted().compactMap { other -> String? in
                    guard other.hasPrefix(file + ".expected-"), other.hasSuffix(".dump") else { return nil }
                    return String(other.dropFirst((file + ".expected-").count).dropLast(".dump".count))
                }
                listings.append(
                    Listing(
                        name: name, store: store.path, versionIdentifiers: inspection.versionIdentifiers,
                        modelHash: metadata.modelHash,
                        entities: Dictionary(inspection.entities.map { ($0.name, $0.rows) }, uniquingKeysWith: +), goldens: goldens,
                        entry: manifest.fixtures.first { $0.name == name }))
            }
        }
        return listings
    }

    private func write(_ manifest: Manifest) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let output = try AtomicOutputFile(destination: manifestURL, overwrite: true)
        var data = try encoder.encode(manifest)
        data.append(0x0A)
        try FileHandle(fileDescriptor: output.fileDescriptor, closeOnDealloc: false).write(contentsOf: data)
        try output.commit()
    }
}
