import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what a store or an archive holds.",
            discussion: """
                For a store: schema version, entity row counts, metadata, model-hash match and WAL state; works on any \
                Core Data / SwiftData store. The model the store carries (Z_MODELCACHE) is shown entity by entity \
                (attributes with their Swift types, relationships with their inverses, unique constraints, indexes), with \
                notes where its column layout is inferred, and a backup: line says whether an export goes by that model \
                or by the store's tables, and why. For an archive (or - for standard input): its manifest, after verifying \
                every member's size, SHA-256 and record count in one streaming pass.
                """
        )

        @Argument(help: "A store file (its -wal and -shm are read from beside it) or an archive.", completion: .file())
        var store: String

        @OptionGroup var archiveKeys: ArchiveKeyOptions

        @Flag(help: "Print a JSON object instead of text.")
        var json = false

        func run() throws {
            try reportingFailures(json: json) {
                if store == "-" || FileKind.of(store) == .archive || FileKind.of(store) == .other {
                    let keys = try archiveKeys.keys()
                    // Only a file tells an encrypted archive from a plain one before reading it:
                    // with keys, standard input is saved first, as it comes (still encrypted).
                    let work = store == "-" && !keys.isEmpty ? try TemporaryDirectory.create(prefix: "questbak-work") : nil
                    defer { if let work { TemporaryDirectory.remove(work) } }
                    let reader: ArchiveReader
                    if let work {
                        let spool = try Questbak.Import.spool(standardInputTo: work)
                        reader = ArchiveReader(path: spool.path, displayPath: "standard input", keys: keys)
                    } else if store == "-" {
                        reader = ArchiveReader(fileDescriptor: STDIN_FILENO, displayPath: "standard input")
                    } else {
                        reader = ArchiveReader(path: store, keys: keys)
                    }
                    let verification = try reader.read()
                    print(json ? try JSONOutput.render(verification) : Self.text(verification))
                    return
                }
                let snapshot = try StoreSnapshot(storeAt: URL(fileURLWithPath: store))
                let inspection = try StoreInspection(snapshot: snapshot, candidates: AppProfile.timeQuest.versions)
                print(json ? try JSONOutput.render(inspection) : Self.text(inspection))
            }
        }

        static func text(_ inspection: StoreInspection) -> String {
            var lines = [
                "store:               \(inspection.path)",
                "uuid:                \(inspection.uuid)",
                "version identifiers: \(inspection.versionIdentifiers.joined(separator: ", "))",
                "framework version:   \(inspection.frameworkVersion.map(String.init) ?? "unknown")",
                "model hashes:        "
                    + (inspection.hashesMatchVersion.map { "match TimeQuest \($0)" } ?? "match no known TimeQuest schema"),
                "schema:              " + (inspection.schemaVersion.map { "TimeQuest \($0)" } ?? "not a known TimeQuest schema"),
                "WAL:                 "
                    + (inspection.walFrames == 0
                        ? "no unmerged frames" : "\(inspection.walFrames) committed frames not yet in the main file"),
                "entities:",
            ]
            let width = max(6, inspection.entities.map(\.name.count).max() ?? 0)
            lines.append("  Z_ENT  " + "entity".padding(toLength: width, withPad: " ", startingAt: 0) + "      rows     Z_MAX")
            for entity in inspection.entities {
                lines.append(
                    "  " + String(entity.number).leftPadded(5) + "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0)
                        + "  " + String(entity.rows).leftPadded(8) + "  " + String(entity.maximumPrimaryKey).leftPadded(8))
                if !entity.rowsByEntity.isEmpty {
                    // Sub-entities share their root's table: say how its rows divide.
                    lines.append(
                        "         \(entity.name) \(entity.rows) rows = "
                            + entity.rowsByEntity.map { "\($0.name) \($0.rows)" }.joined(separator: " + "))
                }
            }
            if !inspection.bookkeepingRows.isEmpty {
                lines.append(
                    "bookkeeping rows:    "
                        + inspection.bookkeepingRows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
            if !inspection.otherTables.isEmpty {
                lines.append(
                    "other tables:        "
                        + inspection.otherTables.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) rows" }.joined(separator: ", ")
                        + " (belong to no entity; an export carries them)")
            }
            switch inspection.model {
            case nil:
                lines.append("model:               none in the store (no Z_MODELCACHE): what it holds is read from its tables")
            case let model? where model.problem != nil:
                lines.append("model:               Z_MODELCACHE cannot be decoded: \(model.problem ?? "")")
            case let model?:
                let verdict = model.hashesMatch ? "hashes match" : "hashes differ for \(model.differingEntities.joined(separator: ", "))"
                lines.append("model:               decoded from the store (\(model.entities) entities), \(verdict)")
                for entity in model.entityDetails {
                    let kind = [entity.isAbstract ? "abstract" : nil, entity.superentity.map { "a \($0)" }].compactMap { $0 }
                    lines.append("  " + entity.name + (kind.isEmpty ? "" : " (\(kind.joined(separator: ", ")))"))
                    if !entity.inheritedProperties.isEmpty {
                        lines.append("    inherits:      " + entity.inheritedProperties.joined(separator: ", "))
                    }
                    if !entity.transientProperties.isEmpty {
                        lines.append("    transient:     " + entity.transientProperties.joined(separator: ", "))
                    }
                    if !entity.attributes.isEmpty { lines.append("    attributes:    " + entity.attributes.joined(separator: ", ")) }
                    if !entity.relationships.isEmpty { lines.append("    relationships: " + entity.relationships.joined(separator: ", ")) }
                    for tuple in entity.uniqueTuples { lines.append("    unique:        " + tuple.joined(separator: ", ")) }
                    if !entity.indexes.isEmpty { lines.append("    indexes:       " + entity.indexes.joined(separator: ", ")) }
                }
                lines += model.notes.map { "  model note: " + $0 }
                lines += model.layoutNotes.map { "  layout note: " + $0 }
            }
            switch inspection.backup {
            case ArchiveManifest.Source.knownSchema: break
            case ArchiveManifest.Source.modelSchema:
                lines.append("backup:              by the store's own model: every table, column and row is explained by it")
            default:
                lines.append(
                    "backup:              by its tables, values in their storage class: \(inspection.backupReason ?? "no model describes them")"
                )
            }
            if let problem = inspection.schemaProblem {
                lines.append("note: " + problem)
            }
            lines += inspection.warnings.map { "warning: " + $0 }
            return lines.joined(separator: "\n")
        }
    }
}

extension Questbak.Inspect {
    static func text(_ verification: ArchiveReader.Verification) -> String {
        let manifest = verification.manifest
        var lines = [
            "archive:             \(verification.archive)",
            "format:              \(manifest.format) \(manifest.formatVersion)",
            "schema version:      \(manifest.effectiveSchemaVersion) (\(manifest.source.schema))",
            "created:             \(manifest.createdAt) by \(manifest.tool.name) \(manifest.tool.version)",
            "source store:        \(manifest.source.storeUUID), version identifiers \(manifest.source.versionIdentifiers.joined(separator: ", "))",
            "verified:            the manifest and all \(verification.verifiedMembers) members it lists (sizes, SHA-256, record counts)",
            "entities:",
        ]
        let width = max(6, manifest.entities.map(\.name.count).max() ?? 0)
        for entity in manifest.entities {
            lines.append(
                "  " + entity.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + String(entity.count).leftPadded(8)
                    + " records  Z_MAX " + String(entity.maximumPrimaryKey))
        }
        for table in manifest.tables ?? [] {
            let what = table.name == CoreDataSQL.primaryKeyTable ? "Core Data's entity keys" : "belongs to no entity"
            lines.append("  table \(table.name): \(table.count) rows (\(what))")
        }
        lines += (manifest.warnings ?? []).map { "warning: " + $0 }
        for file in manifest.files { lines.append("  \(file.path) (\(file.bytes) bytes)") }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
