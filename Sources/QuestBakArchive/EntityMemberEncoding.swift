import CoreDataStore
import Crypto
import GRDB

/// The bytes of one entity member (header line, then one line per record), produced from a
/// store. Export writes them; import computes their digest to prove what it wrote reads back,
/// and the digests equal those a later export of the new store will list.
package enum EntityMemberEncoding {
    /// Streams the member of `entity` through `write` in pieces; returns the number of records.
    ///
    /// An entity of an app profile's version (such as TimeQuest's) is written by the one record
    /// codec, `ModelMemberEncoding`, laid out as `ModelTables` puts it on its table: attributes
    /// by name, then to-one relationships by name, which is the archive's key order for both
    /// kinds of store. A record whose line would pass the format's line limit is refused there,
    /// so that no archive is written that a reader would refuse.
    package static func encode(
        _ db: Database, version: ModelVersion, entity: CompiledEntity, path: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil, readers: KeyRangeReaders? = nil, write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let plan = try Self.plan(db, version: version, entity: entity, path: path)
        return try ModelMemberEncoding.encode(
            db, plan: plan, schemaVersion: version.versionIdentifier, path: path, progress: progress, readers: readers, write: write)
    }

    /// The plan of a version's entity on its table. Every column the layout names must be
    /// there: a store whose tables differ from its version's is described by its own model or its
    /// tables before it gets here, so a missing column is a mismatch, named, never read as null.
    static func plan(_ db: Database, version: ModelVersion, entity: CompiledEntity, path: String) throws -> ModelLayout.EntityPlan {
        // A format 2 record has a place for its entity's own attributes and to-one keys only: a
        // composite's elements, the links of a to-many without an inverse (kept on the
        // destination's table) and a sub-entity's inherited properties would be left out without
        // a word. Such a store is described by its own model.
        let unplaced =
            (entity.superentity.map { ["\(entity.name) is a sub-entity of \($0)"] } ?? [])
            + entity.attributes.filter(\.isComposite).map { "\(entity.name).\($0.name) is a composite" }
            + entity.relationships.filter { $0.isToMany && $0.inverse == nil }.map {
                "\(entity.name).\($0.name) is a to-many without an inverse"
            }
        guard unplaced.isEmpty else {
            throw StoreError.schemaMismatch(
                path: path, versionIdentifier: nil,
                differences: unplaced.map { "\($0), which a record written by a schema has no place for" })
        }
        let tables = try ModelTables(model: version.compiled)
        let tableName = tables.table(for: entity.name)?.name ?? entity.tableName
        let columns = tables.propertyColumns(of: entity.name)
        let available = Set(try db.columns(in: tableName).map { $0.name.uppercased() })
        let missing = (CoreDataSQL.rowColumns + columns.map(\.column.name)).filter { !available.contains($0.uppercased()) }
        guard missing.isEmpty else {
            throw StoreError.schemaMismatch(
                path: path, versionIdentifier: nil, differences: missing.map { "\(tableName): no column \($0)" })
        }
        let columnOf = Dictionary(columns.map { ($0.property, $0.column.name) }, uniquingKeysWith: { first, _ in first })
        let column = { (property: String) in columnOf[property] ?? "" }
        return ModelLayout.EntityPlan(
            name: entity.name, number: Int64(tables.number(of: entity.name) ?? 0), table: tableName,
            fields: entity.attributes.sorted { $0.name < $1.name }.map {
                ModelLayout.Field(
                    path: [$0.name], column: column($0.name), kind: version.declaredKind(of: $0, in: entity.name), isOptional: $0.isOptional
                )
            },
            toOne: entity.toOneRelationships.sorted { $0.name < $1.name }.map {
                ModelLayout.ToOne(name: $0.name, column: column($0.name), destination: $0.destination)
            },
            toMany: [])
    }

    package struct Digest: Sendable, Equatable, Encodable {
        package var count: Int
        var bytes: Int64
        package var sha256: String

        package init(count: Int, bytes: Int64, sha256: String) {
            self.count = count
            self.bytes = bytes
            self.sha256 = sha256
        }

        /// The digest of a member as `encode` streams it (any of the member encodings), without
        /// keeping its bytes.
        package static func of(_ encode: (([UInt8]) throws -> Void) throws -> Int) throws -> Digest {
            var hasher = SHA256()
            var bytes: Int64 = 0
            let count = try encode { chunk in
                hasher.update(data: chunk)
                bytes += Int64(chunk.count)
            }
            return Digest(count: count, bytes: bytes, sha256: hasher.finalize().hexString)
        }
    }
}
