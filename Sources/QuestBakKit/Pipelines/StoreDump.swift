import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// A canonical text dump of a store, the one form golden migration expectations, the gate's
/// round trip and its failure text (a line diff) share for every store, TimeQuest's or any app's
/// (docs/migration-gate.md, "The golden dump"):
///
/// ```
/// # questbak store dump 2
/// metadata uuid=<Z_UUID> versionIdentifiers=<identifiers> checksum=<model checksum>
/// entity <Name> Z_ENT=<number> count=<records> Z_MAX=<Z_PRIMARYKEY.Z_MAX>
/// {"_pk":1,"_opt":1,...}
/// ```
///
/// Each record is one line as an archive of the store described by its model writes it
/// (docs/archive-format.md, "Entity members"), in `_pk` order, entity by entity in the model's
/// order, so a difference shows as a readable line diff and a record added or lost as one line.
///
/// Well-formed cloudIDs are written as `<cloudID>`, or `<repeated cloudID>` when another record
/// of the entity has the same one: generated IDs may change with their generator without the
/// data changing. Other values (the singleton's sentinel, malformed IDs) are written as they are.
package enum StoreDump {
    /// The first line: a dump recorded before it (TimeQuest's `entity … _pk=…` lines, or the
    /// model gate's `# Entity` JSON lines) is in an earlier form and is recorded again.
    package static let header = "# questbak store dump 2"

    /// One entity of a dump: its records as archive lines (without the newline).
    package struct EntityRecords: Sendable {
        package var name: String
        package var number: Int64
        package var maximumPrimaryKey: Int64
        package var lines: [String]
    }

    /// The dump of the store at `store`, read through a snapshot.
    package static func dump(storeAt store: URL, model: ModelVersion) throws -> String {
        let snapshot = try StoreSnapshot(storeAt: store)
        return try snapshot.read { db in
            let metadata = try StoreReader.metadata(db, path: snapshot.path)
            let hashes = ModelVersionHashes(entityHashes: metadata.entityHashes)
            var lines = [
                header,
                "metadata uuid=\(metadata.uuid) versionIdentifiers=\(metadata.versionIdentifiers.joined(separator: ",")) checksum=\(hashes.checksum)",
            ]
            for entity in try entities(db, model: model, path: snapshot.path, maskingCloudIDs: true) {
                lines.append("entity \(entity.name) Z_ENT=\(entity.number) count=\(entity.lines.count) Z_MAX=\(entity.maximumPrimaryKey)")
                lines += entity.lines
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// Every entity's records, read by `model`; cloudIDs as stored unless `maskingCloudIDs`.
    package static func entities(storeAt store: URL, model: ModelVersion, maskingCloudIDs: Bool) throws -> [EntityRecords] {
        let snapshot = try StoreSnapshot(storeAt: store)
        return try snapshot.read { try entities($0, model: model, path: snapshot.path, maskingCloudIDs: maskingCloudIDs) }
    }

    static func entities(_ db: Database, model: ModelVersion, path: String, maskingCloudIDs: Bool) throws -> [EntityRecords] {
        let layout = try model.layout(db, path: path)
        let maxima = Dictionary(try StoreReader.entityKeys(db).map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
        return try layout.entities.map { plan in
            var lines: [String] = []
            var isHeader = true
            _ = try ModelMemberEncoding.encode(db, plan: plan, schemaVersion: "", path: path) { bytes in
                // The first line is the member's header; each later one is a record.
                if isHeader {
                    isHeader = false
                } else {
                    lines.append(String(decoding: bytes.last == UInt8(ascii: "\n") ? bytes.dropLast() : bytes[...], as: UTF8.self))
                }
            }
            if maskingCloudIDs { lines = try masked(lines, plan: plan, db: db) }
            return EntityRecords(name: plan.name, number: plan.number, maximumPrimaryKey: maxima[plan.name] ?? 0, lines: lines)
        }
    }

    /// The lines with each well-formed cloudID replaced by `<cloudID>` or `<repeated cloudID>`.
    private static func masked(_ lines: [String], plan: ModelLayout.EntityPlan, db: Database) throws -> [String] {
        guard let column = plan.fields.first(where: { $0.path == [CompiledEntity.cloudIDAttribute] && $0.kind == .string })?.column else {
            return lines
        }
        let quoted = "\"" + column + "\""
        let repeated = Set(
            try String.fetchAll(
                db,
                sql: """
                    SELECT \(quoted) FROM "\(plan.table)" WHERE \(CoreDataSQL.entityColumn) = \(plan.number) AND \(quoted) IS NOT NULL
                    GROUP BY \(quoted) HAVING count(*) > 1
                    """))
        return try lines.map { line in
            let members = try JSONLine.parseObject(Data(line.utf8))
            guard case .string(let id)? = members.first(where: { $0.key == CompiledEntity.cloudIDAttribute })?.value,
                DeterministicID.isWellFormed(id)
            else { return line }
            // A well-formed ID is hex digits and dashes: its JSON text is the ID itself, quoted.
            let stored = "\"\(CompiledEntity.cloudIDAttribute)\":\"\(id)\""
            guard let range = line.range(of: stored) else { return line }
            let mask = repeated.contains(id) ? "<repeated cloudID>" : "<cloudID>"
            return line.replacingCharacters(in: range, with: "\"\(CompiledEntity.cloudIDAttribute)\":\"\(mask)\"")
        }
    }

    /// A line diff of two dumps (longest common subsequence), with two lines of context around
    /// each change: `-` expected, `+` found.
    package static func diff(expected: String, found: String, context: Int = 2) -> String {
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = found.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard a.count * b.count <= 25_000_000 else {
            let index = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
            return "first difference at line \(index + 1):\n- \(index < a.count ? a[index] : "")\n+ \(index < b.count ? b[index] : "")"
        }
        var lengths = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var script: [(Character, String)] = []
        var i = 0
        var j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                script.append((" ", a[i]))
                i += 1
                j += 1
            } else if j < b.count, i == a.count || lengths[i][j + 1] > lengths[i + 1][j] {
                script.append(("+", b[j]))
                j += 1
            } else {
                script.append(("-", a[i]))
                i += 1
            }
        }
        let changed = script.indices.filter { script[$0].0 != " " }
        var output: [String] = []
        var lastPrinted = -1
        for index in changed {
            let start = max(index - context, lastPrinted + 1)
            let end = min(index + context, script.count - 1)
            guard start <= end else { continue }
            if lastPrinted >= 0 && start > lastPrinted + 1 { output.append("…") }
            for k in start...end { output.append("\(script[k].0) \(script[k].1)") }
            lastPrinted = end
        }
        return output.joined(separator: "\n")
    }
}
