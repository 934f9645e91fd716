import Foundation
import GRDB
import XCTest

@testable import QuestBakKit

extension XCTestCase {
    /// Every row of every table, each value as its storage class and exact bytes (REALs by bit
    /// pattern, so −0.0 and 0.0 differ).
    func exactTables(_ store: URL) throws -> [String: [[String]]] {
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        return try queue.read { db in
            var tables: [String: [[String]]] = [:]
            let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            for name in names {
                tables[name] = try ExactSQL.fetchAll(db, sql: "SELECT * FROM \(name) ORDER BY rowid").map { row in
                    row.map { value in
                        switch value {
                        case .null: return "NULL"
                        case .integer(let number): return "INTEGER \(number)"
                        case .real(let number): return "REAL \(String(number.bitPattern, radix: 16))"
                        case .text(let bytes): return "TEXT \(bytes.base64EncodedString())"
                        case .blob(let bytes): return "BLOB \(bytes.base64EncodedString())"
                        }
                    }
                }
            }
            return tables
        }
    }

    func assertSameTables(_ lhs: URL, _ rhs: URL, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        let (a, b) = (try exactTables(lhs), try exactTables(rhs))
        XCTAssertEqual(a.keys.sorted(), b.keys.sorted(), message, file: file, line: line)
        for table in a.keys.sorted() where a[table] != b[table] {
            XCTFail("\(message): table \(table) differs:\n\(a[table] ?? [])\nvs\n\(b[table] ?? [])", file: file, line: line)
        }
    }
}
