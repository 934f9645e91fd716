import Foundation
import GRDB

/// A canonical text dump of a store: every entity, record and field in a stable order, one
/// record a line, values written exactly as the archive writes them. Golden migration
/// expectations are dumps, so a difference shows as a readable line diff.
///
/// Well-formed cloudIDs are written as `<cloudID>`, or `<repeated cloudID>` when another record
/// of the entity has the same one: generated IDs may change with their generator without the
/// data changing, and a record added or lost shows as one line, not as a shift of every ID after
/// it. Other values (the singleton's sentinel, malformed IDs) are written as they are.
package enum StoreDump {
    public static func dump(_ db: Database, schema: Schema, path: String) throws -> String {
        let metadata = try StoreReader.metadata(db, path: path)
        let hashes = ModelVersionHashes(entityHashes: metadata.entityHashes)
        var lines = [
            "# questbak store dump",
            "schema \(schema.versionIdentifier)",
            "metadata uuid=\(metadata.uuid) versionIdentifiers=\(metadata.versionIdentifiers.joined(separator: ",")) checksum=\(hashes.checksum)",
        ]
        let maxima = Dictionary(try StoreReader.entityKeys(db).map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
        for entity in schema.entities {
            let number = schema.entityNumber(of: entity.name) ?? 0
            let count = try StoreReader.rowCount(db, table: TableLayout(entity: entity).tableName)
            lines.append("entity \(entity.name) Z_ENT=\(number) count=\(count) Z_MAX=\(maxima[entity.name] ?? 0)")
            let names = entity.storedPropertyNames
            var repeated: Set<String> = []
            if let column = TableLayout(entity: entity).column(for: Entity.cloudIDAttribute)?.name {
                repeated = Set(
                    try String.fetchAll(
                        db,
                        sql:
                            "SELECT \(column) FROM \(TableLayout(entity: entity).tableName) WHERE \(column) IS NOT NULL GROUP BY \(column) HAVING count(*) > 1"
                    ))
            }
            try StoreReader.forEachRecord(db, entity: entity, entityNumber: number, path: path) { record in
                var line: [UInt8] = Array("  _pk=\(record.primaryKey)".utf8)
                for name in names {
                    var value = record[name]
                    if name == Entity.cloudIDAttribute, case .string(let id) = value, DeterministicID.isWellFormed(id) {
                        value = .string(repeated.contains(id) ? "<repeated cloudID>" : "<cloudID>")
                    }
                    line.append(contentsOf: " \(name)=".utf8)
                    ValueJSON.append(value, to: &line)
                }
                lines.append(String(decoding: line, as: UTF8.self))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A line diff of two dumps (longest common subsequence), with two lines of context around
    /// each change: `-` expected, `+` found.
    public static func diff(expected: String, found: String, context: Int = 2) -> String {
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
