import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakKit

/// A model archive's record lines are read by position when their keys are exactly those an
/// export writes, in its order, and by name otherwise (`ModelMemberEncoding.LineDecoder`). Both
/// ways must give the same row, or the same error, for every line: lines export wrote from real
/// stores, and each of them taken apart (keys dropped, doubled, swapped, added; values of every
/// other type; composites with a key missing or left over).
final class ModelLineDecoderTests: XCTestCase {
    /// A plan with plain fields, a composite holding a nested composite, a to-one and two to-manys.
    let nested = ModelLayout.EntityPlan(
        name: "Recipe", number: 5, table: "ZRECIPE",
        fields: [
            .init(path: ["cost"], column: "ZCOST", kind: .decimal),
            .init(path: ["createdAt"], column: "ZCREATEDAT", kind: .date),
            .init(path: ["profile", "intensity"], column: "ZINTENSITY", kind: .integer16),
            .init(path: ["profile", "name"], column: "ZNAME1", kind: .string),
            .init(path: ["profile", "origin", "country"], column: "ZCOUNTRY", kind: .string),
            .init(path: ["rating"], column: "ZRATING", kind: .double),
        ],
        toOne: [.init(name: "author", column: "ZAUTHOR")],
        toMany: [
            .init(
                name: "steps", destination: "Step", storage: .destinationColumn(table: "ZSTEP", column: "ZRECIPE1")),
            .init(
                name: "tags", destination: "Tag",
                storage: .joinTable(table: "Z_5TAGS", sourceColumn: "Z_5RECIPES", destinationColumn: "Z_7TAGS")),
        ])

    /// A composite whose elements are not next to each other: export would write it twice (a line
    /// the parser refuses), so its lines are read by name only.
    let split = ModelLayout.EntityPlan(
        name: "Split", number: 2, table: "ZSPLIT",
        fields: [
            .init(path: ["box", "a"], column: "ZA", kind: .integer),
            .init(path: ["plain"], column: "ZPLAIN", kind: .boolean),
            .init(path: ["box", "b"], column: "ZB", kind: .integer),
        ],
        toOne: [], toMany: [])

    func testThePositionsAreTheExportsKeysInItsOrder() {
        let decoder = ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true)
        XCTAssertEqual(
            decoder.keysInOrder, ["_pk", "_opt", "cost", "createdAt", "profile", "rating", "author", "steps", "tags"])
        XCTAssertEqual(ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: false).keysInOrder?.first(where: { $0 == "_opt" }), nil)
        XCTAssertNil(ModelMemberEncoding.LineDecoder(plan: split, carriesOpt: true).keysInOrder, "a composite written twice")
        XCTAssertNil(ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true, byPosition: false).keysInOrder)
    }

    func testHandWrittenLinesAndTheirVariantsReadTheSameBothWays() throws {
        let lines = [
            #"{"_pk":3,"_opt":2,"cost":"12.5","createdAt":"2026-01-01T00:00:00.123456Z","profile":{"intensity":7,"name":"x","origin":{"country":"Italy"}},"rating":4.75,"author":null,"steps":[1,2],"tags":[1,4]}"#,
            #"{"_pk":4,"_opt":null,"cost":null,"createdAt":null,"profile":{"intensity":null,"name":null,"origin":{"country":null}},"rating":null,"author":9,"steps":[],"tags":[]}"#,
        ]
        var compared = 0
        for line in lines {
            XCTAssertNoThrow(try ModelMemberEncoding.LineDecoder(plan: nested, carriesOpt: true).decode(Data(line.utf8)), line)
            compared += try assertReadTheSameBothWays(line, plan: nested)
        }
        compared += try assertReadTheSameBothWays(#"{"_pk":1,"_opt":1,"box":{"a":1,"b":2},"plain":true}"#, plan: split)
        XCTAssertGreaterThan(compared, 300)
    }

    /// Every entity of every store shape that has a model: its lines as export writes them, and
    /// each taken apart, read the same both ways.
    func testLinesOfEveryStoreShapeAndTheirVariantsReadTheSameBothWays() throws {
        var entities = 0
        var compared = 0
        var composites = 0
        for shape in StoreShapes.all {
            let directory = try TemporaryTestDirectory("questbak-line-decoder")
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try shape.make(folder)
            let lines: [(ModelLayout.EntityPlan, [Data])]
            do {
                lines = try StoreSnapshot(storeAt: store).read { db in
                    guard let cache = try StoreReader.modelCache(db) else { return [] }
                    let layout = try ModelLayout(db, model: try ModelCacheDecoder.decode(cache))
                    guard layout.problems.isEmpty else { return [] }
                    return try layout.entities.map { plan in
                        var lines: [Data] = []
                        _ = try ModelMemberEncoding.encode(db, plan: plan, schemaVersion: "1", path: store.path) { line in
                            // The header is no record; a few records of each entity are enough.
                            if lines.count < 6 { lines.append(Data(line.dropLast())) }
                        }
                        return (plan, Array(lines.dropFirst()))
                    }
                }
            } catch {
                continue  // a store its model does not describe is backed up by its tables
            }
            for (plan, records) in lines where !records.isEmpty {
                entities += 1
                if plan.fields.contains(where: { $0.path.count > 1 }) { composites += 1 }
                for line in records.prefix(2) {
                    let text = String(decoding: line, as: UTF8.self)
                    XCTAssertNoThrow(
                        try ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true).decode(line), "\(shape.name): \(text)")
                    compared += try assertReadTheSameBothWays(text, plan: plan, shape: shape.name)
                }
            }
        }
        // A comparison of no lines, or of none with composites, proves nothing.
        XCTAssertGreaterThan(entities, 10)
        XCTAssertGreaterThan(composites, 0)
        XCTAssertGreaterThan(compared, 1000)
    }

    /// Reads `line` and each of its variants both ways and compares; returns how many were read.
    @discardableResult
    private func assertReadTheSameBothWays(_ line: String, plan: ModelLayout.EntityPlan, shape: String = "") throws -> Int {
        let byPosition = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true)
        let byName = ModelMemberEncoding.LineDecoder(plan: plan, carriesOpt: true, byPosition: false)
        let members = try JSONLine.parseObject(Data(line.utf8))
        var variants = [line] + LineVariants.of(members).map(JSONLineText.text)
        variants.append(line.replacingOccurrences(of: "\"_opt\"", with: "\"_opt2\""))
        for variant in variants {
            XCTAssertEqual(
                Self.outcome(byPosition, variant), Self.outcome(byName, variant), "\(shape) \(plan.name): \(variant)")
        }
        return variants.count
    }

    /// A row as text, or the error's reason.
    private static func outcome(_ decoder: ModelMemberEncoding.LineDecoder, _ line: String) -> String {
        do {
            let row = try decoder.decode(Data(line.utf8))
            return "row \(row.primaryKey) \(String(describing: row.opt)) \(row.values) \(row.links)"
        } catch let error as ModelMemberEncoding.LineError {
            return "error \(error.reason)"
        } catch {
            return "other \(error)"
        }
    }
}
