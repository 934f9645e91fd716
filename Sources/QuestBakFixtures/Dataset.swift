import Foundation
import QuestBakKit

/// Records for a store, by entity, in insertion order; the generator's and the tests' currency.
package struct Dataset: Sendable, Equatable {
    public var schema: Schema
    public var records: [String: [EntityRecord]]
    /// `Z_MAX` floors, for stores whose deleted rows left gaps above the largest key.
    public var maximumPrimaryKeyFloor: [String: Int64] = [:]

    public init(schema: Schema, records: [String: [EntityRecord]] = [:]) {
        self.schema = schema
        self.records = records
    }

    public mutating func append(_ entity: String, _ primaryKey: Int64, _ values: [String: Value]) {
        records[entity, default: []].append(EntityRecord(primaryKey: primaryKey, values: values))
    }

    /// Writes the dataset as a new store at `url`; `withModelCache` gives it its compiled model in
    /// `Z_MODELCACHE`, as every store SwiftData writes has (encoded by questbak's own encoder).
    @discardableResult
    public func write(to url: URL, uuid: String, withModelCache: Bool = false) throws -> StoreWriter.Summary {
        let cache = withModelCache ? try ModelCacheEncoder.encode(CompiledModel(schema: schema).asTheFixturesWereArchived) : nil
        return try StoreWriter.write(to: url, schema: schema) { sink in
            for entity in schema.entities {
                for record in records[entity.name] ?? [] { try sink.insert(record, into: entity.name) }
            }
            return StoreWriter.Bookkeeping(
                metadata: StoreMetadata(model: CompiledModel(schema: schema), uuid: uuid), modelCache: cache,
                maximumPrimaryKeyFloor: maximumPrimaryKeyFloor)
        }
    }
}

/// SplitMix64: a tiny seeded generator, so generated data is the same on every run and platform.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A UUID string derived from the generator, for deterministic store UUIDs and cloudIDs.
    public mutating func uuidString() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in stride(from: 0, to: 16, by: 8) {
            let word = next()
            for offset in 0..<8 { bytes[index + offset] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(offset))) }
        }
        return UUID(bytes: bytes, version: 4).uuidString
    }
}

extension CompiledModel {
    /// The model as the committed TimeQuest fixtures' caches were archived, before a schema's
    /// model carried its defaults and delete rules: no attribute default, and every delete rule
    /// nullify (Core Data archives `Routine.tasks`' cascade as 2; these caches hold 1). Kept so
    /// that `make fixtures` writes the same bytes; neither enters a model hash or a layout.
    var asTheFixturesWereArchived: CompiledModel {
        var model = withoutDefaultValues
        for entity in model.entities.indices {
            for relationship in model.entities[entity].relationships.indices {
                model.entities[entity].relationships[relationship].deleteRule = DeleteRule.nullify.code
            }
        }
        return model
    }

    /// The model with no attribute's default value (a composite's elements included).
    var withoutDefaultValues: CompiledModel {
        func strip(_ attribute: CompiledAttribute) -> CompiledAttribute {
            var stripped = attribute
            stripped.defaultValue = nil
            stripped.symbolicDefault = nil
            stripped.elements = attribute.elements.map(strip)
            return stripped
        }
        var model = self
        for index in model.entities.indices { model.entities[index].attributes = model.entities[index].attributes.map(strip) }
        return model
    }
}
