import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Snapshot any SwiftData or Core Data store, WAL included, into a compressed archive of JSON.",
            discussion: """
                The archive is a tar file (zstd-compressed by default) holding manifest.json, one JSON Lines member per entity and the \
                store's metadata; docs/archive-format.md describes it. A TimeQuest store is written by its schema (archive format 2). \
                Any other store is written as format 3, with its own CREATE statements, Z_PRIMARYKEY, the tables of other tools and \
                its external-storage files (.<name>_SUPPORT/_EXTERNAL_DATA): its records typed by the store's own model (Z_MODELCACHE) \
                when that model's hashes match the metadata and it explains every table, column and row, else by its tables, every \
                value in its SQLite storage class, with the reason printed as a warning. The source store and its -wal and -shm are \
                never modified. The archive is written to a temporary file beside FILE and renamed into place only when complete, so \
                an interrupted export leaves no partial FILE. With --recipient, --recipients-file or --passphrase-file the \
                archive is encrypted as it is written (age-encryption.org/v1; age -d opens it): every member, the manifest \
                included, is inside the encryption, and FILE never holds a plaintext byte of the archive. Set SOURCE_DATE_EPOCH \
                or --created-at to make two exports of one store byte-identical.
                """
        )

        @Argument(
            help: "The store file (its -wal and -shm, and any external-storage files, are read from beside it).", completion: .file())
        var store: String

        @Option(
            name: .shortAndLong, help: "The archive to write (suggested extension .qbak), or - for standard output.", completion: .file())
        var output: String

        @Option(help: "zstd, gzip or none.")
        var compression: ArchiveCompression = .preferred

        @Flag(help: "Replace FILE if it exists.")
        var force = false

        @Flag(
            help: ArgumentHelp(
                "Prove the archive restores before keeping it.",
                discussion:
                    "The archive is restored into a scratch folder, records as archived, and every entity is encoded again and compared with its member, as questbak verify does. When it does not give back the store exactly, export exits 65 naming what differs and leaves no archive at FILE. An encrypted archive is read back from the file written and decrypted as it is read, with the file key this run made, so the proof covers the encryption too. Not with -o -: a stream cannot be read back."
            ))
        var verify = false

        @OptionGroup var schemaOptions: SchemaOptions

        @OptionGroup var encryption: RecipientOptions

        @Option(help: "The archive's creation time, UTC, as YYYY-MM-DDTHH:MM:SSZ (default: SOURCE_DATE_EPOCH, else now).")
        var createdAt: String?

        @Flag(name: .shortAndLong, help: "Print nothing but errors.")
        var quiet = false

        @OptionGroup var progressOptions: ProgressOptions

        @Flag(help: "Print a JSON summary: counts, bytes and checksums.")
        var json = false

        func validate() throws {
            if output == "-" && json {
                throw ValidationError("--json cannot be combined with -o -: standard output carries the archive")
            }
            if output == "-" && verify {
                throw ValidationError("--verify cannot be combined with -o -: an archive written to a stream cannot be read back")
            }
            if output == "-" && isatty(STDOUT_FILENO) != 0 {
                throw ValidationError("refusing to write an archive to a terminal; redirect standard output or use -o FILE")
            }
            if let createdAt, ISOTimestamp.unixSeconds(createdAt) == nil {
                throw ValidationError("--created-at must look like 2026-01-31T12:00:00Z")
            }
        }

        func run() throws {
            try reportingFailures(json: json, hint: Self.hint) {
                let progress = progressOptions.reporter(command: "export", quiet: quiet || json)
                defer { progress.abandon() }
                var options = Exporter.Options(
                    createdAt: try ISOTimestamp.creationTime(flag: createdAt), compression: compression, progress: progress.callback)
                options.profiles = [try schemaOptions.profile()]
                options.verify = verify
                options.recipients = try encryption.recipientList()
                let destination: Exporter.Destination =
                    output == "-" ? .fileDescriptor(STDOUT_FILENO) : .file(URL(fileURLWithPath: output), overwrite: force)
                let summary = try Exporter.export(storeAt: URL(fileURLWithPath: store), to: destination, options: options)
                progress.finish()
                if json {
                    print(try JSONOutput.render(summary))
                } else if !quiet {
                    let text = Self.text(summary, store: store)
                    if output == "-" { standardError(text) } else { print(text) }
                }
                // Said whatever else is asked (the JSON carries them too): the archive holds the
                // store as it is, oddities included.
                if !json { for warning in summary.warnings { standardError("questbak: warning: " + warning) } }
            }
        }

        static func hint(_ error: Error) -> String? {
            switch error {
            case OutputError.exists: return "use --force to overwrite it"
            case StoreError.notAStore(_, let reason) where reason.contains("tar archive"): return "to restore a backup, use questbak import"
            default: return nil
            }
        }

        static func text(_ summary: Exporter.Summary, store: String) -> String {
            let version = summary.schemaVersion.isEmpty ? "no version identifier" : "version \(summary.schemaVersion)"
            let kind: String
            switch summary.schema {
            case ArchiveManifest.Source.knownSchema: kind = "TimeQuest \(summary.schemaVersion) store \(store)"
            case ArchiveManifest.Source.modelSchema: kind = "another app's store \(store) (\(version)), typed by its own model"
            default: kind = "another app's store \(store) (\(version)), by its tables: every value in its SQLite storage class"
            }
            var lines = ["exported \(kind)"]
            lines.append(
                "  to \(summary.archive?.path ?? "standard output") (\(summary.compression)"
                    + (summary.archiveBytes.map { ", \($0) bytes" } ?? "") + ")")
            if let encryption = summary.encryption { lines.append("  encrypted: \(encryption)") }
            if summary.walFrames > 0 { lines.append("  including \(summary.walFrames) WAL frames not yet in the main file") }
            if let verification = summary.verification {
                lines.append(
                    "  verified: restored in a scratch folder, the archive gives back the store exactly (\(verification.records) records, \(verification.entities) entities)"
                )
            }
            let width = summary.entities.map(\.name.count).max() ?? 0
            for entity in summary.entities {
                lines.append(
                    "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + String(entity.count).leftPadded(8)
                        + " records  sha256 " + entity.sha256.prefix(16) + "…")
            }
            for table in summary.tables {
                let what = table.name == CoreDataSQL.primaryKeyTable ? "Core Data's entity keys" : "belongs to no entity"
                lines.append("  table \(table.name): \(table.count) rows (\(what); carried as it is)")
            }
            return lines.joined(separator: "\n")
        }
    }
}

extension ArchiveCompression: ExpressibleByArgument {}

func standardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Creation times: an explicit flag, else SOURCE_DATE_EPOCH (reproducible builds' convention),
/// else the clock. Only the CLI reads the clock; the library is handed the result.
enum ISOTimestamp {
    static func unixSeconds(_ text: String) -> Int64? {
        guard let seconds = DateText.secondsSinceReferenceDate(iso8601: text), seconds.rounded(.down) == seconds else { return nil }
        return Int64(seconds) + DateText.referenceDateUnixOffset
    }

    static func creationTime(flag: String?) throws -> Int64 {
        if let flag, let seconds = unixSeconds(flag) { return seconds }
        if let epoch = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"] {
            guard let seconds = Int64(epoch), Exporter.createdAtText(unixSeconds: seconds) != nil else {
                throw ValidationError("SOURCE_DATE_EPOCH must be whole seconds since 1970 within years 0001–9999, not \"\(epoch)\"")
            }
            return seconds
        }
        return Int64(Date().timeIntervalSince1970)
    }
}
