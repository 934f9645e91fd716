import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify, validate and repair an archive, and restore it into a store atomically.",
            discussion: """
                Every member is verified against the manifest before anything is kept. With --validate, questbak repairs what sync \
                bugs and reinstalls leave behind in a TimeQuest archive (relationships to missing records become nil; duplicate \
                records collapse into the lowest _pk with their children re-pointed; extra PlayerProfiles merge; missing values get \
                the V2 default; missing, malformed or repeated cloudIDs are regenerated) and reports each repair. Without --validate \
                an archive that needs repairs is refused. Without --into it only validates: exit 0 when the archive is clean, 2 when \
                it needs repairs. An archive of another app's store (format 3) is restored from the store's own statements as the \
                version it was, its external-storage files written beside STORE before the store is put in place; --to-version with \
                another version and --template are refused for it. Without --validate it is restored as archived; with \
                --validate it is repaired by the store's own model: \
                records that break a uniqueness constraint collapse into the one restored first, with every relationship and link \
                re-pointed; relationships and links to missing records are dropped; missing values get the model's default; \
                cloudIDs are regenerated as above. A store is written into a temporary file beside STORE, read back \
                and verified, and renamed into place; --replace keeps the old store as STORE.questbak-backup-<time>. To undo a \
                replace: every file of that backup (with its -wal and -shm) and the commands that put them back are printed, on \
                standard error under --quiet and --json; a replace refused because the store is in use keeps no backup. \
                With --merge, the archive's records are merged into the existing STORE instead: records are matched by cloudID, \
                uniqueness constraint or natural key (never _pk); records only in the archive are inserted under new keys with \
                their relationships and links translated; in records of both, what the store lacks is filled and a conflict is \
                settled by --prefer (store by default, archive, or newer by a date property) after the app's own rules; the \
                store's cloudID is kept and the archive's reported as superseded. Nothing is deleted. A merge that adds nothing \
                leaves STORE byte for byte; otherwise the old store is kept as STORE.questbak-backup-<time>.
                """
        )

        @Argument(help: "The archive, or - for standard input.", completion: .file())
        var archive: String

        @Option(help: "The store to write.", completion: .file())
        var into: String?

        // Not `validate`: that name is ParsableCommand's own check of the arguments.
        @Flag(name: .customLong("validate"), help: "Validate and repair; without --into, only report.")
        var validateAndRepair = false

        @Option(help: "The schema version of the new store, e.g. 2.0.0 (default: the archive's, the only one another app's archive takes).")
        var toVersion: String?

        @Option(
            help: "A store whose metadata (model hashes, framework version, model cache) the new store takes (TimeQuest archives only).",
            completion: .file())
        var template: String?

        @Flag(help: "Replace an existing STORE, keeping it as a backup beside it.")
        var replace = false

        @OptionGroup var schemaOptions: SchemaOptions

        @OptionGroup var archiveKeys: ArchiveKeyOptions

        @Flag(help: "Do everything but put the new store in place.")
        var dryRun = false

        @Option(help: "Write the repair report as JSON to this file.", completion: .file())
        var report: String?

        @Flag(help: "Print the repair report as JSON.")
        var json = false

        @Option(help: "What Date.now defaults become, UTC, as YYYY-MM-DDTHH:MM:SSZ (default: the archive's createdAt).")
        var now: String?

        @Flag(help: "Give regenerated cloudIDs fresh random UUIDs instead of deterministic ones.")
        var randomIds = false

        @Flag(help: "Read an archive of a newer schema; what the new store cannot hold goes to the report.")
        var allowNewer = false

        @Flag(help: "Keep records of one natural key whose cloudIDs differ as distinct records (by default they are one record).")
        var keepDistinctIds = false

        @Flag(
            help:
                "Merge the archive's records into the existing STORE instead of replacing it: nothing of the store is deleted, the old store is kept beside it."
        )
        var merge = false

        @Option(help: "With --merge, whose value a field keeps when both have one: store (default), archive, or newer.")
        var prefer: Merger.Preference = .store

        @Option(
            help: ArgumentHelp(
                "With --prefer newer, the date property that says which copy of ENTITY is newer (repeatable; default: updatedAt and its kin).",
                valueName: "ENTITY.PROPERTY"))
        var newerBy: [String] = []

        @Flag(name: .shortAndLong, help: "Print nothing but errors.")
        var quiet = false

        @OptionGroup var progressOptions: ProgressOptions

        func validate() throws {
            if merge {
                if into == nil { throw ValidationError("--merge needs --into STORE, the store to merge into") }
                if replace { throw ValidationError("--merge keeps the store and adds to it; leave out --replace") }
                if toVersion != nil || template != nil {
                    throw ValidationError("--merge writes the store's own version and metadata; leave out --to-version and --template")
                }
            } else if prefer != .store || !newerBy.isEmpty {
                throw ValidationError("--prefer and --newer-by need --merge")
            }
            if !newerBy.isEmpty && prefer != .newer { throw ValidationError("--newer-by needs --prefer newer") }
            for pair in newerBy where Self.entityAndProperty(pair) == nil {
                throw ValidationError("--newer-by must look like Entity.property, found \"\(pair)\"")
            }
            if into == nil && !validateAndRepair {
                throw ValidationError("give --into STORE to restore, or --validate to check the archive only")
            }
            // --to-version and --template work without --into: a preview shows all a restore would do.
            if into == nil && (replace || dryRun) {
                throw ValidationError("--replace and --dry-run need --into STORE")
            }
            if let now, DateText.secondsSinceReferenceDate(iso8601: now) == nil {
                throw ValidationError("--now must look like 2026-01-31T12:00:00Z")
            }
        }

        func run() throws {
            var status = ExitStatus.success
            let report = self.report
            let hint: (Error) -> String? = { [merge] in merge ? Self.mergeHint($0, report: report) : Self.hint($0, report: report) }
            try reportingFailures(json: json, hint: hint) {
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let progress = progressOptions.reporter(command: merge ? "merge" : "import", quiet: quiet || json)
                defer { progress.abandon() }
                var options = Importer.Options()
                options.progress = progress.callback
                options.validate = validateAndRepair
                options.targetVersion = toVersion
                options.template = template.map { URL(fileURLWithPath: $0) }
                options.replace = replace
                options.dryRun = dryRun
                options.now = now.flatMap { DateText.secondsSinceReferenceDate(iso8601: $0) }
                options.randomIDs = randomIds
                options.allowNewer = allowNewer
                options.keepDistinctIDs = keepDistinctIds
                options.backupStamp = Self.stamp(Date())
                options.profiles = [try schemaOptions.profile()]
                options.keys = try archiveKeys.keys()
                let file = archive == "-" ? try Self.spool(standardInputTo: work).path : archive
                if merge, let into {
                    status = try runMerge(archive: file, into: URL(fileURLWithPath: into), restore: options, work: work)
                    progress.finish()
                    return
                }
                let reportFile = try ReportDocument.open(report)
                let displayName = archive == "-" ? "standard input" : archive
                let result: Importer.Result
                do {
                    result = try Importer.run(
                        archive: file, displayName: displayName, into: into.map { URL(fileURLWithPath: $0) }, options: options,
                        workDirectory: work)
                } catch ImportError.repairsNeeded(let archive, let counts) where reportFile != nil {
                    try Self.reportRepairs(archive: file, displayName: displayName, options: options, to: reportFile)
                    throw ImportError.repairsNeeded(archive: archive, counts: counts)
                }
                progress.finish()
                try ReportDocument.emit(summary: result, log: result.log, to: reportFile, json: json)
                if !json && !quiet {
                    print(try Self.text(result))
                }
                // How to undo a replace is printed whatever else is asked: to standard error under
                // --quiet and --json, where standard output is silent or a document.
                if let undo = Self.undoText(result) {
                    if quiet || json { FileHandle.standardError.write(Data((undo + "\n").utf8)) } else { print(undo) }
                }
                // One rule for every run that writes nothing (--validate alone, --dry-run): exit 2
                // when the restore would repair data or leave some out.
                let unclean = result.repairs + (result.counts.filter { $0.key.hasPrefix("unstorable.") }.values.reduce(0, +))
                if result.dryRun && unclean > 0 { status = .repairsNeeded }
            }
            if status != .success { throw ExitCode(status.rawValue) }
        }

        /// For an import refused for want of --validate: the report asked for says what a restore
        /// with --validate would repair. The same import as a preview (writing nothing) gives every entry.
        static func reportRepairs(
            archive file: String, displayName: String, options: Importer.Options, to reportFile: AtomicOutputFile?
        )
            throws
        {
            var preview = options
            preview.validate = true
            preview.replace = false
            preview.dryRun = false
            let work = try TemporaryDirectory.create(prefix: "questbak-work")
            defer { TemporaryDirectory.remove(work) }
            let repairs = try Importer.run(archive: file, displayName: displayName, into: nil, options: preview, workDirectory: work)
            try ReportDocument.emit(summary: repairs, log: repairs.log, to: reportFile, json: false)
        }

        static func entityAndProperty(_ text: String) -> (entity: String, property: String)? {
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
            return (String(parts[0]), String(parts[1]))
        }

        /// Standard input is read twice (the manifest, then everything), so it is saved first, as
        /// it comes: an encrypted archive stays encrypted in the spool and is decrypted on each read.
        static func spool(standardInputTo directory: URL) throws -> URL {
            let file = directory.appendingPathComponent("stdin.qbak")
            guard FileManager.default.createFile(atPath: file.path, contents: nil), let output = FileHandle(forWritingAtPath: file.path)
            else {
                throw OutputError.cannotCreate(path: file.path, reason: "cannot save standard input")
            }
            defer { try? output.close() }
            while let chunk = try FileHandle.standardInput.read(upToCount: 1 << 20), !chunk.isEmpty { try output.write(contentsOf: chunk) }
            return file
        }

        static func undoText(_ result: Importer.Result) -> String? {
            guard let backup = result.backup, let target = result.target else { return nil }
            return Undo.text(backup: backup, files: result.backupFiles, target: target)
        }

        /// What to do about `error`, in this command's flags; a flag already given is not asked for.
        static func hint(_ error: Error, report: String?) -> String? {
            switch error {
            case OutputError.exists: return "use --replace to replace it; the old store is kept as a backup"
            case ImportError.repairsNeeded:
                guard let report else { return "rerun with --validate to make them, and --report FILE to see each" }
                return "rerun with --validate to make them; \(report) lists each"
            case ArchiveError.unsupportedSchemaVersion:
                return "upgrade questbak, or pass --allow-newer to import what this version can hold"
            case ArchiveError.unreadable(_, let reason) where reason.contains("SQLite store"):
                return "to back up a store, use questbak export"
            default: return nil
            }
        }

        static func stamp(_ date: Date) -> String { QuestBak.backupStamp(date) }

        static func text(_ result: Importer.Result) throws -> String {
            let action: String
            if let target = result.target {
                action = result.dryRun ? "dry run: would write \(target.path)" : "wrote \(target.path)"
            } else {
                action = "validated (nothing written)"
            }
            var lines = ["\(action) from \(result.archiveName), schema \(result.sourceSchemaVersion) → \(result.targetSchemaVersion)"]
            lines += result.notes
            let width = result.entities.map(\.name.count).max() ?? 0
            for entity in result.entities {
                lines.append(
                    "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  read " + String(entity.read).leftPadded(8)
                        + (result.dryRun ? "  would write " : "  written ") + String(entity.written).leftPadded(8))
            }
            if result.counts.isEmpty {
                lines.append("no repairs needed")
            } else {
                lines.append("changes: " + result.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
                let shown = try result.log.firstEntries(20).map(\.sentence)
                lines += shown.map { "  " + $0 }
                let total = result.counts.values.reduce(0, +)
                if total > shown.count { lines.append("  … \(total - shown.count) more (--report FILE or --json lists all)") }
            }
            return lines.joined(separator: "\n")
        }
    }
}
