import CoreDataStore
import Crypto
import GRDB

/// The bytes of one entity member (header line, then one line per record), produced from a
/// store. Export writes them; import computes their digest to prove what it wrote reads back,
/// and the digests equal those a later export of the new store will list.
package enum EntityMemberEncoding {
    /// Streams the member through `write` in pieces; returns the number of records.
    ///
    /// This is the export's hot loop: each row goes from SQLite's columns straight to JSON bytes,
    /// through the same column plan and value decoding as every other reader, without building a
    /// record. A record whose line would pass the format's line limit is refused here, so that
    /// no archive is written that a reader would refuse.
    package static func encode(
        _ db: Database, schema: Schema, entity: Entity, entityNumber: Int?, path: String,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil, write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let layout = TableLayout(entity: entity)
        let filter = entityNumber.map { " WHERE Z_ENT = \($0)" } ?? ""
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(layout.tableName)\(filter)") ?? 0
        try write(EntityHeader(schemaVersion: schema.versionIdentifier, entity: entity.name, count: total).line())
        let plan = try RecordColumns(db, entity: entity, entityNumber: entityNumber)
        // Each property's `,"name":` bytes, in the archive's key order.
        let keys: [[UInt8]] = plan.properties.map { property in
            var key: [UInt8] = [UInt8(ascii: ",")]
            ValueJSON.appendString(property.name, to: &key)
            key.append(UInt8(ascii: ":"))
            return key
        }
        var done = 0
        var line: [UInt8] = []
        line.reserveCapacity(512)
        let prefix = Array("{\"\(RecordJSON.primaryKeyKey)\":".utf8)
        let optKey = Array(",\"\(RecordJSON.optKey)\":".utf8)
        try plan.forEachRow(db) { row in
            let primaryKey = try plan.primaryKey(row, entity: entity, path: path)
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: prefix)
            line.append(contentsOf: String(primaryKey).utf8)
            line.append(contentsOf: optKey)
            if let opt = try plan.opt(row, entity: entity, primaryKey: primaryKey, path: path) {
                line.append(contentsOf: String(opt).utf8)
            } else {
                line.append(contentsOf: "null".utf8)
            }
            for (property, key) in zip(plan.properties, keys) {
                line.append(contentsOf: key)
                ValueJSON.append(try plan.value(row, property, entity: entity, primaryKey: primaryKey, path: path), to: &line)
            }
            line.append(contentsOf: "}\n".utf8)
            guard line.count <= ArchiveManifest.maximumLineBytes else {
                throw StoreError.recordTooLarge(
                    path: path, entity: entity.name, primaryKey: primaryKey, lineBytes: line.count, limit: ArchiveManifest.maximumLineBytes)
            }
            try write(line)
            done += 1
            if done % 10_000 == 0 { progress?(done, total) }
        }
        progress?(done, total)
        return done
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
        static func of(_ encode: (([UInt8]) throws -> Void) throws -> Int) throws -> Digest {
            var hasher = SHA256()
            var bytes: Int64 = 0
            let count = try encode { chunk in
                hasher.update(data: chunk)
                bytes += Int64(chunk.count)
            }
            return Digest(count: count, bytes: bytes, sha256: hasher.finalize().hexString)
        }
    }

    package static func digest(_ db: Database, schema: Schema, entity: Entity, path: String) throws -> Digest {
        try Digest.of {
            try encode(db, schema: schema, entity: entity, entityNumber: schema.entityNumber(of: entity.name), path: path, write: $0)
        }
    }
}
