import Foundation

/// The `Z_METADATA` row: store UUID and the metadata plist Core Data checks on open.
package struct StoreMetadata: Sendable, Equatable {
    /// The newest framework version seen in real stores; written when no source or template
    /// store supplies its own.
    public static let defaultFrameworkVersion: Int64 = 1526

    public var uuid: String
    public var plist: PropertyListValue
    /// The plist exactly as a source store held it, written back byte for byte when present.
    public var originalBytes: Data?

    public init(uuid: String, plist: PropertyListValue, originalBytes: Data? = nil) {
        self.uuid = uuid
        self.plist = plist
        self.originalBytes = originalBytes
    }

    /// Metadata carried over from a store or an archive, bytes and all.
    public init(uuid: String, encodedPlist: Data) throws {
        self.init(uuid: uuid, plist: try BinaryPropertyList.decode(encodedPlist), originalBytes: encodedPlist)
    }

    public var encodedPlist: Data { originalBytes ?? BinaryPropertyList.encode(plist) }

    /// The metadata of a store of `model`, with hashes computed from it (its first version
    /// identifier is the one written, as SwiftData names one). Keys of `carryingOver` (a source
    /// store's metadata) that describe something else than the model, such as
    /// `NSPersistenceMaximumFrameworkVersion` or an app's own keys, are kept.
    package init(
        model: CompiledModel, uuid: String, frameworkVersion: Int64 = StoreMetadata.defaultFrameworkVersion,
        carryingOver source: StoreMetadata? = nil
    ) {
        let hashes = ModelVersionHashes(model: model)
        self.uuid = uuid
        var kept: [String: PropertyListValue] = [:]
        if case .dictionary(let entries)? = source?.plist { kept = entries }
        let computed: [String: PropertyListValue] = [
            "NSStoreType": .string("SQLite"),
            "NSStoreUUID": .string(uuid),
            "NSStoreModelVersionIdentifiers": .array([.string(model.versionIdentifier)]),
            "NSStoreModelVersionHashes": .dictionary(hashes.entityHashes.mapValues { .data($0) }),
            "NSStoreModelVersionChecksumKey": .string(hashes.checksum),
            "NSStoreModelVersionHashesDigest": .string(hashes.digest),
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSPersistenceFrameworkVersion": .integer(frameworkVersion),
            "_NSAutoVacuumLevel": .string("2"),
        ]
        plist = .dictionary(kept.merging(computed) { _, new in new })
    }

    public var versionIdentifiers: [String] {
        guard case .array(let values)? = plist["NSStoreModelVersionIdentifiers"] else { return [] }
        return values.compactMap { if case .string(let text) = $0 { return text } else { return nil } }
    }

    public var frameworkVersion: Int64? {
        if case .integer(let version)? = plist["NSPersistenceFrameworkVersion"] { return version }
        return nil
    }

    public var entityHashes: [String: Data] {
        guard case .dictionary(let entries)? = plist["NSStoreModelVersionHashes"] else { return [:] }
        return entries.compactMapValues { if case .data(let hash) = $0 { return hash } else { return nil } }
    }

    /// The first 12 hex digits of the model's checksum (SHA-256 of the entity version hashes in
    /// name order, computed from the hashes, so old stores without a checksum key have one too):
    /// stores of one physical model share it, whatever their version identifier says.
    public var modelHash: String {
        String((Data(base64Encoded: ModelVersionHashes(entityHashes: entityHashes).checksum) ?? Data()).hexString.prefix(12))
    }

    /// Which of `versions` the stored model hashes belong to; `nil` when none (the app would
    /// migrate, or fail to open the store).
    package func versionMatchingHashes(in versions: [ModelVersion]) -> ModelVersion? {
        ModelVersion.matching(entityHashes: entityHashes, in: versions)
    }

    /// Where hashes recomputed from a model differ from the stored ones: each entity whose hash
    /// differs (or that only one side has), then "checksum" and "digest" when the metadata holds
    /// those and they differ. Empty when the model is the one the store was made with.
    public func hashDifferences(from hashes: ModelVersionHashes) -> [String] {
        let stored = entityHashes
        var differing = Set(hashes.entityHashes.keys).union(stored.keys).filter { hashes.entityHashes[$0] != stored[$0] }.sorted()
        if case .string(let checksum)? = plist["NSStoreModelVersionChecksumKey"], checksum != hashes.checksum {
            differing.append("checksum")
        }
        if case .string(let digest)? = plist["NSStoreModelVersionHashesDigest"], digest != hashes.digest { differing.append("digest") }
        return differing
    }

    /// The same metadata for a store with another UUID.
    public func withUUID(_ newUUID: String) -> StoreMetadata {
        guard newUUID != uuid else { return self }
        var copy = self
        copy.uuid = newUUID
        if case .dictionary(var entries) = plist, entries["NSStoreUUID"] != nil {
            entries["NSStoreUUID"] = .string(newUUID)
            copy.plist = .dictionary(entries)
            copy.originalBytes = nil
        }
        return copy
    }
}
