import ArgumentParser
import Foundation
import QuestBakKit

extension Merger.Preference: ExpressibleByArgument {}

extension Questbak.Import {
    /// `import --merge`: the archive's records merged into the existing store.
    /// `restore` is the options a plain import would take, from the same flags.
    func runMerge(archive file: String, into target: URL, restore: Importer.Options, work: URL) throws -> ExitStatus {
        // Its peak memory, the least room under 64 MB of any command, no longer moves by a few
        // MB from run to run with the threads' timing (`MallocSettings`).
        MallocSettings.keepLargeBlocksMapped()
        var options = Merger.Options()
        options.restore = restore
        options.preference = prefer
        options.newerBy = Dictionary(
            newerBy.compactMap { Self.entityAndProperty($0) }.map { ($0.entity, $0.property) }, uniquingKeysWith: { _, last in last })
        // The report's file is opened first: a path it cannot be written to refuses the merge
        // before the store is replaced, not after (with the backup's name and the undo unsaid).
        let reportFile = try ReportDocument.open(report)
        let displayName = archive == "-" ? "standard input" : archive
        let result: Merger.Result
        do {
            result = try Merger.run(archive: file, displayName: displayName, into: target, options: options, workDirectory: work)
        } catch ImportError.repairsNeeded(let archive, let counts) where reportFile != nil {
            // The archive's own records need repairs: the report says which, as for a restore.
            var preview = restore
            preview.targetVersion = nil
            preview.template = nil
            try Self.reportRepairs(archive: file, displayName: displayName, options: preview, to: reportFile)
            throw ImportError.repairsNeeded(archive: archive, counts: counts)
        }
        try ReportDocument.emit(summary: result, log: result.log, to: reportFile, json: json)
        if !json && !quiet {
            print(try Self.text(result))
        }
        if let backup = result.backup {
            let undo = Undo.text(backup: backup, files: result.backupFiles, target: result.target)
            if quiet || json { FileHandle.standardError.write(Data((undo + "\n").utf8)) } else { print(undo) }
        }
        return .success
    }

    static func mergeHint(_ error: Error, report: String?) -> String? {
        switch error {
        case ImportError.notImportable(_, let reason) where reason.contains("its model is not the store's"):
            return "migrate the older store with questbak migrate OLD --to NEW_MODEL_STORE, then merge"
        case ImportError.notADateProperty: return "name a date property with --newer-by ENTITY.PROPERTY, or leave --newer-by out"
        case ImportError.storeChangedDuringMerge: return "close the app and run the merge again"
        default: return hint(error, report: report)
        }
    }

    static func text(_ result: Merger.Result) throws -> String {
        let action: String
        if result.unchanged {
            action = "nothing to merge into \(result.target.path)"
        } else {
            action = result.dryRun ? "dry run: would merge into \(result.target.path)" : "merged into \(result.target.path)"
        }
        var lines = [
            "\(action) from \(result.archiveName), schema \(result.schemaVersion), conflicts settled for the \(result.preference.rawValue)"
        ]
        lines += result.notes.map {
            $0.hasPrefix("no date property says which copy is newer") ? $0 + " (--newer-by ENTITY.PROPERTY names one)" : $0
        }
        let width = result.entities.map(\.name.count).max() ?? 0
        for entity in result.entities {
            let matched = entity.matched.values.reduce(0, +)
            let how = entity.matched.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.value) by \($0.key)" }.joined(
                separator: ", ")
            lines.append(
                "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  store " + String(entity.store).leftPadded(8)
                    + "  archive " + String(entity.archive).leftPadded(8) + "  matched " + String(matched).leftPadded(8) + "  inserted "
                    + String(entity.inserted).leftPadded(8) + "  changed " + String(entity.changed).leftPadded(6)
                    + (how.isEmpty ? "" : "  (\(how))"))
        }
        let merged = result.counts.filter { $0.key.hasPrefix("merge.") || $0.key.hasPrefix("bookkeeping.") }
        if merged.isEmpty {
            lines.append("no changes")
        } else {
            lines.append("changes: " + merged.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
            let shown = try result.log.firstEntries(20).map(\.sentence)
            lines += shown.map { "  " + $0 }
            let total = merged.values.reduce(0, +)
            if total > shown.count { lines.append("  … \(total - shown.count) more (--report FILE or --json lists all)") }
        }
        if let superseded = result.counts["merge.supersede"] {
            lines.append(
                "\(superseded) cloudID(s) of the archive's copies are superseded by the store's: the app can delete those records from CloudKit (--report FILE lists them)"
            )
        }
        return lines.joined(separator: "\n")
    }
}
