import CoreDataStore
import Foundation
import QuestBakArchive

extension Redactor {
    /// Redacts an archive into a new archive: restored exactly as archived (no repair) into a
    /// private scratch folder, redacted there as a store, and exported with `--verify`'s proof.
    /// The scratch folder, which holds the restored original, is removed whatever happens.
    public static func redact(
        archiveAt archive: URL, to target: URL, options: Options, createdAt: Int64, compression: ArchiveCompression = .preferred
    ) throws -> RedactionReport {
        if FileManager.default.fileExists(atPath: target.path) { throw OutputError.exists(path: target.path) }
        let scratch = try TemporaryDirectory.create(prefix: "questbak-redact-archive")
        defer { TemporaryDirectory.remove(scratch) }
        let restored = scratch.appendingPathComponent("original/default.store")
        let redacted = scratch.appendingPathComponent("redacted/default.store")
        let work = scratch.appendingPathComponent("work")
        for folder in [restored.deletingLastPathComponent(), redacted.deletingLastPathComponent(), work] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        var importOptions = Importer.Options()
        importOptions.asArchived = true
        importOptions.profiles = options.profiles
        _ = try Importer.run(archive: archive.path, into: restored, options: importOptions, workDirectory: work)
        let report = try redact(storeAt: restored, to: redacted, options: options)
        var exportOptions = Exporter.Options(createdAt: createdAt, compression: compression)
        exportOptions.verify = true
        exportOptions.profiles = options.profiles
        _ = try Exporter.export(storeAt: redacted, to: .file(target, overwrite: false), options: exportOptions)
        return report
    }
}
