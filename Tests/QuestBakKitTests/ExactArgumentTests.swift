import CoreDataStore
import Foundation
import GRDB
import XCTest

/// `ExactSQL.execute(_:_:texts:)` binds texts as ranges of one buffer (the report log's
/// writer): what it stores must be what `ExactSQL.execute(_:_:)` stores of the same values
/// as `StoredValue`s, storage class and every byte.
final class ExactArgumentTests: XCTestCase {
    /// Values with what a range can get wrong: empty text (not NULL), a NUL inside and at the
    /// end, bytes that are not UTF-8, the buffer's first and last bytes, NULL, integers.
    private let texts: [[UInt8]] = [
        [], Array("a".utf8), [0x61, 0x00, 0x62], [0xFF, 0xFE, 0x00], Array("Ünïcødé ✓".utf8), [0x00], Array("last".utf8),
    ]

    func testRangesOfOneBufferStoreWhatStoredValuesStore() throws {
        let queue = try DatabaseQueue()
        var buffer: [UInt8] = []
        var ranged: [ExactArgument] = []
        var stored: [StoredValue] = []
        for (index, text) in texts.enumerated() {
            let start = buffer.count
            buffer += text
            ranged += [.text(start..<buffer.count), .integer(Int64(index)), index % 2 == 0 ? .null : .integer(-Int64(index))]
            stored += [.text(Data(text)), .integer(Int64(index)), index % 2 == 0 ? .null : .integer(-Int64(index))]
        }
        let rows = texts.count
        let dumped = try queue.write { db -> [[[StoredValue]]] in
            try db.execute(sql: "CREATE TABLE ranged (a, b, c); CREATE TABLE stored (a, b, c)")
            let values = repeatElement("(?, ?, ?)", count: rows).joined(separator: ", ")
            try ExactSQL.execute(try db.makeStatement(sql: "INSERT INTO ranged VALUES \(values)"), ranged, texts: buffer)
            try ExactSQL.execute(try db.makeStatement(sql: "INSERT INTO stored VALUES \(values)"), stored)
            return try ["ranged", "stored"].map { table in
                try ExactSQL.fetchAll(db, sql: "SELECT a, typeof(a), hex(a), b, c FROM \(table) ORDER BY rowid")
            }
        }
        XCTAssertEqual(dumped[0].count, rows)
        XCTAssertEqual(dumped[0], dumped[1])
        XCTAssertEqual(dumped[0].map { $0[0] }, texts.map { .text(Data($0)) })
    }

    func testARangePastTheBufferIsRefusedAndNothingIsWritten() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a)")
            let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
            XCTAssertThrowsError(try ExactSQL.execute(insert, [.text(2..<5)], texts: Array("abcd".utf8)))
            XCTAssertThrowsError(try ExactSQL.execute(insert, [.text(0..<1), .null], texts: Array("abcd".utf8)))
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM t"), 0)
            // The statement is usable again, its bindings cleared.
            try ExactSQL.execute(insert, [.text(1..<3)], texts: Array("abcd".utf8))
            XCTAssertEqual(try ExactSQL.fetchAll(db, sql: "SELECT a FROM t"), [[.text(Data("bc".utf8))]])
        }
    }

    /// `ExactRow.withText` lends a TEXT's bytes as `self[column]` reads them (every byte, a NUL
    /// inside, empty text), and gives nil for every other storage class without calling its body.
    func testATextLentInPlaceIsTheTextReadAsAValue() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v)")
            for text in texts { try ExactSQL.execute(db, sql: "INSERT INTO t VALUES (?)", [.text(Data(text))]) }
            try ExactSQL.execute(db, sql: "INSERT INTO t VALUES (?), (?), (?), (NULL)", [.integer(7), .real(1.5), .blob(Data([0x61]))])
            var lent: [[UInt8]?] = []
            var read: [[UInt8]?] = []
            try ExactSQL.forEachRow(db, sql: "SELECT v FROM t ORDER BY rowid") { row in
                lent.append(row.withText(0) { Array($0) })
                if case .text(let bytes) = row[0] { read.append(Array(bytes)) } else { read.append(nil) }
            }
            XCTAssertEqual(lent, read)
            XCTAssertEqual(lent, texts.map { $0 } + [nil, nil, nil, nil])
        }
    }
}
