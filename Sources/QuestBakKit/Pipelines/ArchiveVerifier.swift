import CoreDataStore
import Foundation
import QuestBakArchive

/// `questbak verify ARCHIVE`: a checksum proves the bytes, not that the backup restores. The
/// archive is restored into a scratch folder, as `import` would restore it (every member checked,
/// the store written, `integrity_check`, read back), and each restored entity is encoded again
/// and compared with its member: the archive restores exactly only when every digest is the
/// manifest's and nothing needed a repair.
package enum ArchiveVerifier {
    /// Whether an archive restores exactly, entity by entity (the API's names are public).
    package typealias EntityCheck = QuestBak.VerifyResult.EntityCheck
    package typealias Result = QuestBak.VerifyResult

    /// Restores `file` into `workDirectory` and compares. By default repairs are made and counted
    /// (a restore with `--validate` would make them, so the answer names them all); `asArchived`
    /// restores the records as the archive holds them instead, anomalies included, which is the
    /// question an export asks of its own archive: does it give back the store it was made from?
    /// `restoredStore`, when given, keeps the restored store there (a path in a folder of the
    /// caller's) for a comparison of its own. `profiles` are the apps whose schemas an archive
    /// written by a schema (format 1 or 2) may be of (`Importer.Options.profiles`).
    package static func verify(
        archive file: String, displayName: String? = nil, keys: ArchiveKeys = ArchiveKeys(), asArchived: Bool = false,
        profiles: [AppProfile] = [], restoredStore: URL? = nil, workDirectory: URL, progress: ((RecordProgress) -> Void)? = nil,
        cancellation: Cancellation? = nil
    ) throws -> Result {
        let path = displayName ?? file
        let manifest = try ArchiveReader(path: file, displayPath: path, keys: keys).readManifest()
        var options = Importer.Options()
        options.keys = keys
        options.profiles = profiles
        options.validate = !asArchived
        options.asArchived = asArchived
        options.progress = progress
        options.cancellation = cancellation
        let restored = try Importer.run(
            archive: file, displayName: path, into: restoredStore, options: options, workDirectory: workDirectory)
        let archived = Dictionary(manifest.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let entities = restored.entities.map { entity in
            EntityCheck(
                name: entity.name, records: entity.written, archived: archived[entity.name]?.sha256 ?? "",
                restored: entity.sha256, same: archived[entity.name]?.sha256 == entity.sha256)
        }
        let changes = restored.counts.filter { !$0.key.hasPrefix("bookkeeping.") }.values.reduce(0, +)
        return Result(
            archive: URL(fileURLWithPath: file), archiveName: path, schema: manifest.source.schema, formatVersion: manifest.formatVersion,
            restoresExactly: changes == 0 && entities.allSatisfy(\.same) && entities.count == manifest.entities.count,
            entities: entities, counts: restored.counts, notes: restored.notes)
    }

    /// What differs, one sentence a difference: the entities whose records came back otherwise,
    /// and what the restore would change.
    package static func differences(_ result: Result) -> [String] {
        var lines = result.entities.filter { !$0.same }.map {
            "\($0.name): \($0.records) records restored with sha256 \($0.restored), the archive's member has \($0.archived)"
        }
        lines += result.counts.filter { !$0.key.hasPrefix("bookkeeping.") && $0.value > 0 }.sorted { $0.key < $1.key }.map {
            "\($0.key): \($0.value)"
        }
        return lines
    }
}
