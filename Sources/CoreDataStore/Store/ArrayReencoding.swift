import Foundation
import GRDB

extension TransformableArray {
    /// The `[Int]` and `[String]` attributes of a store of `model` (a version whose kinds name the typed arrays) whose stored bytes are
    /// not the keyed archive a restore writes for the same array (a JSON array, or a keyed archive
    /// laid out otherwise), one sentence per attribute.
    ///
    /// A TimeQuest archive carries such an array as its elements (format 2 has no place for the
    /// bytes), so a restore gives back the same array in other bytes: export says so, since
    /// the restore cannot know.
    package static func reencodedAttributes(_ db: Database, model: ModelVersion) throws -> [String] {
        var sentences: [String] = []
        let tables = try ModelTables(model: model.compiled)
        for entity in model.entitiesInNameOrder {
            guard let tableName = tables.table(for: entity.name)?.name, try db.tableExists(tableName) else { continue }
            let available = Set(try db.columns(in: tableName).map { $0.name.uppercased() })
            for attribute in entity.attributes
            where [.integerArray, .stringArray].contains(model.declaredKind(of: attribute, in: entity.name)) {
                guard let column = tables.column(for: [attribute.name], of: entity.name)?.name, available.contains(column.uppercased())
                else { continue }
                var count = 0
                var first: Int64?
                try ExactSQL.forEachRow(
                    db,
                    sql:
                        "SELECT \(CoreDataSQL.keyColumn), \(column) FROM \(tableName) WHERE \(column) IS NOT NULL ORDER BY \(CoreDataSQL.keyColumn)"
                ) {
                    row in
                    guard case .blob(let bytes) = row[1], let elements = try? unarchive(bytes), archive(elements) != bytes else { return }
                    count += 1
                    if first == nil { first = row.integer(0) }
                }
                if count > 0 {
                    sentences.append(
                        "\(entity.name).\(attribute.name): \(count) value(s) (the first of _pk \(first ?? 0)) are stored in other bytes than the keyed archive questbak writes; a restore gives back the same arrays in its own bytes"
                    )
                }
            }
        }
        return sentences
    }
}
