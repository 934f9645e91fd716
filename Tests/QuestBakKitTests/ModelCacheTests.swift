import Crypto
import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class ModelCacheTests: XCTestCase {
    typealias Code = CompiledAttribute.TypeCode

    /// A model with every attribute type code, composites (one nested), every relationship shape
    /// the spec names, a sub-entity, a unique tuple, an index, a rename and a default of each kind.
    static let model: CompiledModel = {
        let uuidBytes = Data((0..<16).map { UInt8($0 * 7 + 1) })
        var mantissa = Data(count: 16)
        mantissa[0] = 0x39  // 12345 = 0x3039
        mantissa[1] = 0x30
        let prep = CompiledAttribute(
            name: "prep", typeCode: Code.composite, isOptional: true,
            elements: [
                CompiledAttribute(name: "id", typeCode: Code.string, valueClassName: "NSString", isOptional: true),
                CompiledAttribute(name: "steps", typeCode: Code.binary, valueClassName: "NSData", isOptional: true),
            ])
        let recipe = CompiledAttribute(
            name: "recipe", typeCode: Code.composite, defaultValue: .dictionary([:]),
            elements: [
                CompiledAttribute(name: "id", typeCode: Code.string, valueClassName: "NSString", isOptional: true), prep,
                CompiledAttribute(
                    name: "servings", typeCode: Code.int64, valueClassName: "NSNumber", isOptional: true, defaultValue: .integer(2)),
            ])
        let itemAttributes: [CompiledAttribute] = [
            CompiledAttribute(name: "int16Value", typeCode: Code.int16, valueClassName: "NSNumber", defaultValue: .integer(-7)),
            CompiledAttribute(name: "int32Value", typeCode: Code.int32, valueClassName: "NSNumber", isOptional: true),
            CompiledAttribute(name: "int64Value", typeCode: Code.int64, valueClassName: "NSNumber", defaultValue: .integer(5_000_000_000)),
            CompiledAttribute(
                name: "decimalValue", typeCode: Code.decimal, valueClassName: "NSDecimalNumber",
                defaultValue: .decimal(mantissa: mantissa, exponent: -2, isNegative: true)),
            CompiledAttribute(name: "doubleValue", typeCode: Code.double, valueClassName: "NSNumber", defaultValue: .real(0.1)),
            CompiledAttribute(name: "floatValue", typeCode: Code.float, valueClassName: "NSNumber", defaultValue: .real(1.5)),
            CompiledAttribute(
                name: "title", typeCode: Code.string, valueClassName: "NSString", defaultValue: .string("café ☀️"),
                renamingIdentifier: "name"),
            CompiledAttribute(name: "flag", typeCode: Code.boolean, valueClassName: "NSNumber", defaultValue: .boolean(true)),
            CompiledAttribute(
                name: "created", typeCode: Code.date, valueClassName: "NSDate", defaultValue: .date(secondsSince2001: 785_000_000.25)),
            CompiledAttribute(name: "blob", typeCode: Code.binary, valueClassName: "NSData", defaultValue: .data(Data([0, 1, 2, 0xFF]))),
            CompiledAttribute(name: "uuidValue", typeCode: Code.uuid, valueClassName: "NSUUID", defaultValue: .uuid(uuidBytes)),
            CompiledAttribute(name: "link", typeCode: Code.uri, valueClassName: "NSURL", isOptional: true),
            CompiledAttribute(
                name: "tags", typeCode: Code.transformable, valueClassName: "Array<String>", transformerName: "NSSecureUnarchiveFromData"),
            CompiledAttribute(name: "objectRef", typeCode: Code.objectID, isOptional: true),
            recipe,
        ]
        return CompiledModel(
            versionIdentifiers: ["2.0.0"],
            entities: [
                CompiledEntity(
                    name: "Animal", attributes: [CompiledAttribute(name: "legs", typeCode: Code.int64, valueClassName: "NSNumber")],
                    renamingIdentifier: "Animal"),
                CompiledEntity(
                    name: "Category",
                    relationships: [
                        CompiledRelationship(
                            name: "expenses", destination: "Expense", inverse: "categories", maxCount: 0, isOptional: false),
                        CompiledRelationship(
                            name: "items", destination: "Item", inverse: "category", maxCount: 0, deleteRule: 2, isOptional: false),
                    ], renamingIdentifier: "Category"),
                CompiledEntity(
                    name: "Cocktail",
                    relationships: [
                        CompiledRelationship(
                            name: "spec", destination: "Ingredient", maxCount: 0, deleteRule: 2, isOptional: false, isOrdered: true)
                    ], renamingIdentifier: "Cocktail", versionHashModifier: "v2"),
                CompiledEntity(
                    name: "Dog", superentity: "Animal",
                    attributes: [CompiledAttribute(name: "breed", typeCode: Code.string, isOptional: true)],
                    renamingIdentifier: "Dog"),
                CompiledEntity(
                    name: "Expense",
                    relationships: [
                        CompiledRelationship(name: "categories", destination: "Category", inverse: "expenses", maxCount: 0, deleteRule: 1)
                    ],
                    renamingIdentifier: "Expense"),
                CompiledEntity(
                    name: "Ingredient", attributes: [CompiledAttribute(name: "name", typeCode: Code.string, valueClassName: "NSString")],
                    renamingIdentifier: "Ingredient"),
                CompiledEntity(
                    name: "Item", attributes: itemAttributes.sorted { $0.name < $1.name },
                    relationships: [
                        CompiledRelationship(name: "category", destination: "Category", inverse: "items", maxCount: 1, deleteRule: 1)
                    ],
                    uniqueTuples: [["uuidValue"], ["title", "int64Value"]],
                    indexes: [
                        CompiledIndex(
                            name: "Item_SwiftDataIndexOnTitle",
                            elements: [.init(propertyName: "title"), .init(propertyName: "created", ascending: false, type: nil)])
                    ], renamingIdentifier: "Item"),
            ])
    }()

    // MARK: Round trips

    func testRoundTripOfEveryShape() throws {
        let content = try ModelCacheEncoder.encode(Self.model)
        let decoded = try ModelCacheDecoder.decode(content)
        XCTAssertEqual(decoded.notes, [])
        XCTAssertEqual(decoded.versionIdentifiers, Self.model.versionIdentifiers)
        XCTAssertEqual(decoded.entities.map(\.name), Self.model.entities.map(\.name))
        for (got, want) in zip(decoded.entities, Self.model.entities) {
            XCTAssertEqual(got, want, "entity \(want.name)")
        }
        XCTAssertEqual(decoded, Self.model)
    }

    func testEveryTypeCodeIsCovered() throws {
        let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(Self.model))
        let codes = Set(decoded.entity(named: "Item")!.attributes.map(\.typeCode))
        XCTAssertEqual(codes, Set(Code.all))
        let recipe = decoded.entity(named: "Item")!.attributes.first { $0.name == "recipe" }!
        XCTAssertEqual(recipe.elements.map(\.name), ["id", "prep", "servings"])
        XCTAssertEqual(recipe.elements[1].elements.map(\.name), ["id", "steps"])
        XCTAssertEqual(decoded.entity(named: "Dog")?.superentity, "Animal")
        let title = decoded.entity(named: "Item")!.attributes.first { $0.name == "title" }!
        XCTAssertEqual(title.renamingIdentifier, "name")
    }

    func testArchiveHasTheSpecifiedShape() throws {
        let archive = try ModelCacheEncoder.archive(Self.model)
        XCTAssertEqual(archive["$archiver"], .string("NSKeyedArchiver"))
        XCTAssertEqual(archive["$version"], .integer(100_000))
        let reader = try KeyedArchive(archive)
        let root = try reader.rootObject()
        XCTAssertEqual(root.className, "NSManagedObjectModel")
        let entities = try XCTUnwrap(try reader.object("NSEntities", of: root))
        XCTAssertEqual(entities.className, "NSKnownKeysDictionary1")
        let first = try reader.resolve(try XCTUnwrap(try reader.elements("values", of: entities)).first!, from: nil, key: nil)
        guard case .object(let animal) = first else { return XCTFail("no entity") }
        // The back-reference to the model is there, and is not followed by the decoder.
        XCTAssertEqual(animal.fields["NSManagedObjectModel"], .uid(UInt64(root.index)))
        XCTAssertEqual(try reader.string("NSEntityName", of: animal), "Animal")
    }

    /// Foundation reads the binary plist the encoder writes, as the spec says it reads real caches.
    func testFoundationReadsTheArchivePlist() throws {
        let bytes = BinaryPropertyList.encode(try ModelCacheEncoder.archive(Self.model))
        let parsed = try PropertyListSerialization.propertyList(from: bytes, format: nil) as? [String: Any]
        XCTAssertEqual(parsed?["$archiver"] as? String, "NSKeyedArchiver")
        XCTAssertEqual((parsed?["$objects"] as? [Any])?.first as? String, "$null")
    }

    func testStringObjectsInlineValuesAndNotes() throws {
        var archive = try ModelCacheEncoder.archive(Self.model)
        try mutateObjects(&archive) { objects in
            // An entity name as an NSString object (not a plain string), an
            // unknown key, and a _P that disagrees with NSIsOptional.
            let stringClass = UInt64(objects.count)
            objects.append(
                .dictionary(["$classname": .string("NSString"), "$classes": .array([.string("NSString"), .string("NSObject")])]))
            let nameObject = UInt64(objects.count)
            objects.append(.dictionary(["$class": .uid(stringClass), "NS.string": .string("Ingredient")]))
            let ingredient = try index(in: objects) { $0["NSEntityName"] != nil && self.text($0["NSEntityName"], objects) == "Ingredient" }
            objects[ingredient] = set(objects[ingredient], "NSEntityName", .uid(nameObject))
            let legs = try index(in: objects) { self.text($0["NSPropertyName"], objects) == "legs" }
            objects[legs] = set(set(objects[legs], "NSFutureKey", .integer(1)), "_P", .integer(243))
        }
        let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))
        XCTAssertEqual(decoded.entities, Self.model.entities)
        XCTAssertEqual(
            decoded.notes, ["NSAttributeDescription key NSFutureKey not read", "attribute legs: _P 243 disagrees with NSIsOptional false"])
    }

    // MARK: Damaged inputs

    func testTruncatedDeflateIsRefused() throws {
        let content = try ModelCacheEncoder.encode(Self.model)
        XCTAssertThrowsError(try ModelCacheDecoder.decode(content.prefix(content.count / 2))) { error in
            guard case .compression(.truncated)? = error as? ModelCacheError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try RawDeflate.inflate(Data())) { error in
            guard case .truncated? = error as? RawDeflate.Failure else { return XCTFail("\(error)") }
        }
    }

    func testGarbageAndTrailingBytesAreRefused() throws {
        XCTAssertThrowsError(try RawDeflate.inflate(Data([0xFF, 0xFF, 0xFF, 0xFF]))) { error in
            guard case .damaged? = error as? RawDeflate.Failure else { return XCTFail("\(error)") }
        }
        let content = try RawDeflate.deflate(Data("hello".utf8)) + Data([1, 2, 3])
        XCTAssertThrowsError(try RawDeflate.inflate(content)) { error in
            XCTAssertEqual(error as? RawDeflate.Failure, .trailingBytes(count: 3))
        }
    }

    func testDeflateBombStopsAtTheLimit() throws {
        let bomb = try RawDeflate.deflate(Data(count: RawDeflate.defaultOutputLimit + (1 << 20)), level: 9)
        XCTAssertLessThan(bomb.count, 200_000)
        XCTAssertThrowsError(try ModelCacheDecoder.decode(bomb)) { error in
            XCTAssertEqual(error as? ModelCacheError, .compression(.outputLimitExceeded(limit: RawDeflate.defaultOutputLimit)))
        }
        let content = try ModelCacheEncoder.encode(Self.model)
        XCTAssertThrowsError(try ModelCacheDecoder.decode(content, outputLimit: 1000)) { error in
            XCTAssertEqual(error as? ModelCacheError, .compression(.outputLimitExceeded(limit: 1000)))
        }
    }

    func testNotAPropertyListIsRefused() throws {
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try RawDeflate.deflate(Data("not a plist".utf8)))) { error in
            guard case .propertyList? = error as? ModelCacheError else { return XCTFail("\(error)") }
        }
    }

    func testUIDOutOfRangeNamesObjectAndKey() throws {
        var archive = try ModelCacheEncoder.archive(Self.model)
        var entity = -1
        var count = 0
        try mutateObjects(&archive) { objects in
            entity = try index(in: objects) { self.text($0["NSEntityName"], objects) == "Cocktail" }
            objects[entity] = set(objects[entity], "NSEntityName", .uid(9999))
            count = objects.count
        }
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))) { error in
            XCTAssertEqual(
                error as? ModelCacheError,
                .archive(KeyedArchiveError(.uidOutOfRange(uid: 9999, objectCount: count), objectIndex: entity, key: "NSEntityName")))
            XCTAssertTrue((error as? LocalizedError)?.errorDescription?.contains("key \"NSEntityName\"") ?? false)
        }
    }

    func testCycleIsRefused() throws {
        var archive = try ModelCacheEncoder.archive(Self.model)
        var composite = -1
        try mutateObjects(&archive) { objects in
            // The composite `prep` lists itself among its elements.
            composite = try index(in: objects) { self.text($0["NSPropertyName"], objects) == "prep" }
            guard case .uid(let list)? = objects[composite]["NSCompositeElements"],
                case .array(var members)? = objects[Int(list)]["NS.objects"]
            else { throw XCTSkip("unexpected encoder layout") }
            members.append(.uid(UInt64(composite)))
            objects[Int(list)] = set(objects[Int(list)], "NS.objects", .array(members))
        }
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))) { error in
            guard case .archive(let failure)? = error as? ModelCacheError, case .cycle(let path) = failure.kind else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(path, [composite, composite])
            XCTAssertEqual(failure.objectIndex, composite)
        }
    }

    func testDefaultValueCycleIsRefused() throws {
        var archive = try ModelCacheEncoder.archive(Self.model)
        try mutateObjects(&archive) { objects in
            let recipe = try index(in: objects) { self.text($0["NSPropertyName"], objects) == "recipe" }
            guard case .uid(let dictionary)? = objects[recipe]["NSDefaultValue"] else { throw XCTSkip("unexpected encoder layout") }
            let key = UInt64(objects.count)
            objects.append(.string("again"))
            objects[Int(dictionary)] = set(
                set(objects[Int(dictionary)], "NS.keys", .array([.uid(key)])), "NS.objects", .array([.uid(dictionary)]))
        }
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))) { error in
            guard case .archive(let failure)? = error as? ModelCacheError, case .cycle = failure.kind else { return XCTFail("\(error)") }
        }
    }

    func testMissingTopIsRefused() throws {
        guard case .dictionary(var entries) = try ModelCacheEncoder.archive(Self.model) else { return XCTFail() }
        entries["$top"] = nil
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(.dictionary(entries)))) { error in
            XCTAssertEqual(error as? ModelCacheError, .archive(KeyedArchiveError(.missingTop, key: "$top")))
        }
        entries["$top"] = .dictionary(["root": .uid(0)])
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(.dictionary(entries)))) { error in
            XCTAssertEqual(error as? ModelCacheError, .archive(KeyedArchiveError(.missingTop, key: "$top.root")))
        }
    }

    func testWrongClassIsRefused() throws {
        guard case .dictionary(var entries) = try ModelCacheEncoder.archive(Self.model), case .array(let objects)? = entries["$objects"]
        else {
            return XCTFail()
        }
        // The root points at an entity instead of the model.
        let entity = try index(in: objects) { self.text($0["NSEntityName"], objects) == "Animal" }
        entries["$top"] = .dictionary(["root": .uid(UInt64(entity))])
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(.dictionary(entries)))) { error in
            XCTAssertEqual(
                error as? ModelCacheError,
                .archive(KeyedArchiveError(.wrongClass(expected: "NSManagedObjectModel", found: "NSEntityDescription"), key: "$top.root")))
        }
        // A property that is neither an attribute nor a relationship.
        var archive = try ModelCacheEncoder.archive(Self.model)
        try mutateObjects(&archive) { objects in
            let legs = try index(in: objects) { self.text($0["NSPropertyName"], objects) == "legs" }
            let classUID = UInt64(objects.count)
            objects.append(.dictionary(["$classname": .string("NSURL"), "$classes": .array([.string("NSURL"), .string("NSObject")])]))
            objects[legs] = set(objects[legs], "$class", .uid(classUID))
        }
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))) { error in
            guard case .archive(let failure)? = error as? ModelCacheError,
                case .wrongClass("NSAttributeDescription or NSRelationshipDescription", "NSURL") = failure.kind
            else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.key, "NSProperties[0]")
        }
    }

    func testWrongTypeNamesTheKey() throws {
        var archive = try ModelCacheEncoder.archive(Self.model)
        var legs = -1
        try mutateObjects(&archive) { objects in
            legs = try index(in: objects) { self.text($0["NSPropertyName"], objects) == "legs" }
            objects[legs] = set(objects[legs], "NSAttributeType", .string("Int64"))
        }
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))) { error in
            XCTAssertEqual(
                error as? ModelCacheError,
                .archive(
                    KeyedArchiveError(
                        .wrongType(expected: "an integer", found: "the string \"Int64\""), objectIndex: legs, key: "NSAttributeType")
                ))
        }
    }

    /// `NSEntities` as a plain dictionary (not seen in a real cache) is read, and said to be unusual.
    func testPlainDictionaryOfEntitiesIsReadWithANote() throws {
        var archive = try ModelCacheEncoder.archive(Self.model)
        try mutateObjects(&archive) { objects in
            let known = try index(in: objects) { $0["values"] != nil && $0["searchMapping"] != nil }
            guard case .uid(let values)? = objects[known]["values"], case .array(let entities)? = objects[Int(values)]["NS.objects"],
                case .uid(let mapping)? = objects[known]["searchMapping"], case .uid(let keys)? = objects[Int(mapping)]["keys"],
                case .array(let names)? = objects[Int(keys)]["NS.objects"]
            else { throw XCTSkip("unexpected encoder layout") }
            let classUID = UInt64(objects.count)
            objects.append(
                .dictionary(["$classname": .string("NSDictionary"), "$classes": .array([.string("NSDictionary"), .string("NSObject")])]))
            objects[known] = .dictionary(["$class": .uid(classUID), "NS.keys": .array(names), "NS.objects": .array(entities)])
        }
        let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))
        XCTAssertEqual(decoded.entities, Self.model.entities)
        XCTAssertEqual(decoded.notes, ["NSEntities is an NSDictionary, not an NSKnownKeysDictionary1"])
    }

    func testDeepNestingIsRefused() throws {
        var element = CompiledAttribute(name: "leaf", typeCode: Code.string, isOptional: true)
        for level in 0..<80 { element = CompiledAttribute(name: "level\(level)", typeCode: Code.composite, elements: [element]) }
        let deep = CompiledModel(versionIdentifiers: ["1.0.0"], entities: [CompiledEntity(name: "Deep", attributes: [element])])
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(deep))) { error in
            guard case .archive(let failure)? = error as? ModelCacheError, case .tooDeep(KeyedArchive.maximumDepth) = failure.kind else {
                return XCTFail("\(error)")
            }
        }
    }

    /// Damaged archives are refused or read, never trapped on.
    func testFlippedBytesNeverTrap() throws {
        let plist = BinaryPropertyList.encode(try ModelCacheEncoder.archive(Self.model))
        var generator = SystemRandomNumberGenerator()
        var refused = 0
        for _ in 0..<2000 {
            var bytes = [UInt8](plist)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 8..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do { _ = try ModelCacheDecoder.decode(propertyList: Data(bytes)) } catch { refused += 1 }
        }
        XCTAssertGreaterThan(refused, 0)
    }

    // MARK: The real raw DEFLATE format, against Python's zlib

    func testRawDeflateMatchesPythonZlib() throws {
        let payload = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 31 % 251) }) + Data("Z_MODELCACHE".utf8)
        // Python compresses; we inflate.
        let compressed = try python(
            "import sys, zlib; c = zlib.compressobj(9, zlib.DEFLATED, -15); d = sys.stdin.buffer.read(); "
                + "sys.stdout.buffer.write(c.compress(d) + c.flush())", input: payload)
        XCTAssertNotEqual(compressed.prefix(2), Data([0x78, 0xDA]), "raw: no zlib header")
        XCTAssertEqual(try RawDeflate.inflate(compressed), payload)
        // We compress; Python inflates.
        let ours = try RawDeflate.deflate(payload)
        let inflated = try python(
            "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read(), wbits=-15))", input: ours)
        XCTAssertEqual(inflated, payload)
        // A whole model cache compressed by Python decodes.
        let plist = BinaryPropertyList.encode(try ModelCacheEncoder.archive(Self.model))
        let content = try python(
            "import sys, zlib; c = zlib.compressobj(wbits=-15); sys.stdout.buffer.write(c.compress(sys.stdin.buffer.read()) + c.flush())",
            input: plist)
        XCTAssertEqual(try ModelCacheDecoder.decode(content), Self.model)
        // A zlib-wrapped stream (header 0x78) is not raw DEFLATE and is refused.
        let wrapped = try python("import sys, zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))", input: payload)
        XCTAssertThrowsError(try RawDeflate.inflate(wrapped))
    }

    // MARK: Helpers

    private func python(_ script: String, input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        do { try process.run() } catch { throw XCTSkip("python3 not available: \(error)") }
        // Write from another thread so that a full output pipe cannot block the writer.
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw XCTSkip("python3 zlib failed with status \(process.terminationStatus)") }
        return output
    }

    private func mutateObjects(_ archive: inout PropertyListValue, _ body: (inout [PropertyListValue]) throws -> Void) throws {
        guard case .dictionary(var entries) = archive, case .array(var objects)? = entries["$objects"] else {
            throw XCTSkip("not an archive")
        }
        try body(&objects)
        entries["$objects"] = .array(objects)
        archive = .dictionary(entries)
    }

    private func index(in objects: [PropertyListValue], where predicate: (PropertyListValue) -> Bool) throws -> Int {
        guard let found = objects.firstIndex(where: predicate) else { throw XCTSkip("object not found") }
        return found
    }

    private func text(_ reference: PropertyListValue?, _ objects: [PropertyListValue]) -> String? {
        guard case .uid(let uid)? = reference, uid < objects.count, case .string(let value) = objects[Int(uid)] else { return nil }
        return value
    }

    private func set(_ object: PropertyListValue, _ key: String, _ value: PropertyListValue) -> PropertyListValue {
        guard case .dictionary(var entries) = object else { return object }
        entries[key] = value
        return .dictionary(entries)
    }
}

// MARK: Everything that enters the hashes (issue #23, section 2)

extension ModelCacheTests {
    static func shapeModel(_ name: String) throws -> CompiledModel {
        try XCTUnwrap(ModelCacheShapes.all.first { $0.name == name }?.store.model, name)
    }

    /// Core Data archives an inherited property as an `_NSPropertyDescriptionProxy` whose
    /// `NSUnderlyingProperty` is the declaring ancestor's description: read back as inherited.
    func testInheritedPropertiesAreProxiesOfTheDeclaringAncestor() throws {
        let model = try Self.shapeModel("abstract parent with inherited properties")
        let archive = try ModelCacheEncoder.archive(model)
        let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))
        XCTAssertEqual(decoded.notes, [])
        XCTAssertEqual(decoded, model)
        XCTAssertEqual(decoded.entity(named: "Syrup")?.inheritedProperties, ["milliliters", "name", "position", "recipe"])
        XCTAssertEqual(decoded.entity(named: "Syrup")?.attributes.map(\.name), ["sugar"])
        XCTAssertEqual(decoded.entity(named: "Ingredient")?.isAbstract, true)

        let reader = try KeyedArchive(archive)
        var underlying: [String: Set<UInt64>] = [:]
        for index in reader.objects.indices.dropFirst() {
            guard case .object(let object) = try reader.resolve(.uid(UInt64(index)), from: nil, key: nil),
                object.className == "_NSPropertyDescriptionProxy"
            else { continue }
            XCTAssertEqual(Set(object.fields.keys), ["NSReferenceID", "NSUnderlyingProperty", "NSEntityDescription"])
            let property = try XCTUnwrap(try reader.object("NSUnderlyingProperty", of: object))
            guard case .uid(let uid)? = object.fields["NSUnderlyingProperty"] else { return XCTFail("not a reference") }
            underlying[try reader.requiredString("NSPropertyName", of: property), default: []].insert(uid)
        }
        // Liquid 4, Solid 4 and Syrup 5 inherited properties (the transient displayName among
        // them); each shares its one declaration.
        XCTAssertEqual(underlying.keys.sorted(), ["displayName", "milliliters", "name", "position", "recipe"])
        XCTAssertEqual(decoded.entity(named: "Syrup")?.transientProperties, ["displayName"])
        XCTAssertTrue(underlying.values.allSatisfy { $0.count == 1 }, "\(underlying)")
    }

    /// A cache that lists inherited properties as descriptions of their own (not proxies) says the
    /// same: the property is the ancestor's, and the hashes are those of the proxy form.
    func testInheritedCopiesAreReadAsInherited() throws {
        let model = try Self.shapeModel("abstract parent with inherited properties")
        var copies = model
        let ingredient = try XCTUnwrap(model.entity(named: "Ingredient"))
        for position in copies.entities.indices where copies.entities[position].superentity == "Ingredient" {
            copies.entities[position].inheritedProperties = []
            copies.entities[position].attributes = (copies.entities[position].attributes + ingredient.attributes).sorted {
                $0.name < $1.name
            }
            copies.entities[position].relationships = ingredient.relationships
        }
        let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.encode(copies))
        XCTAssertEqual(decoded.entity(named: "Liquid"), model.entity(named: "Liquid"))
        XCTAssertEqual(decoded.entity(named: "Solid"), model.entity(named: "Solid"))
        XCTAssertEqual(ModelVersionHashes(model: decoded), ModelVersionHashes(model: model))
    }

    /// The hash scheme of store-format.md, computed here independently, for what a partial reader
    /// skips: an abstract entity, a parent's hash, inherited properties, NSFlagsKey bits.
    func testHashesCoverAbstractnessInheritanceAndStorageFlags() throws {
        func sha(_ parts: [Data]) -> Data { Data(SHA256.hash(data: parts.reduce(Data(), +))) }
        func le<T: FixedWidthInteger>(_ value: T) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
        func base(_ name: String, optional: Bool) -> Data { sha([Data(name.utf8), le(UInt16(optional ? 1 : 0))]) }
        func attribute(_ name: String, _ code: Int32, optional: Bool = false, flags: [UInt8] = []) -> Data {
            sha([base(name, optional: optional), le(code), Data(flags)])
        }
        let recipe = sha([base("recipe", optional: true), Data("Recipe".utf8), Data("ingredients".utf8), le(Int32(1)), le(Int32(0))])
        let name = attribute("name", 700)
        let position = attribute("position", 300)
        let ingredient = sha([Data("Ingredient".utf8), Data([1]), name, position, recipe])
        let liquid = sha([Data("Liquid".utf8), Data([0]), ingredient, attribute("milliliters", 500), name, position, recipe])
        let hashes = ModelVersionHashes(model: try Self.shapeModel("abstract parent with inherited properties"))
        XCTAssertEqual(hashes.entityHashes["Ingredient"], ingredient)
        XCTAssertEqual(hashes.entityHashes["Liquid"], liquid)

        let photo = sha([
            Data("Photo".utf8), Data([0]), attribute("caption", 700, optional: true, flags: [1]),
            attribute("full", 1000, optional: true, flags: [1]), attribute("original", 1000, optional: true, flags: [1, 1]),
            attribute("thumbnail", 1000, optional: true),
        ])
        XCTAssertEqual(ModelVersionHashes(model: try Self.shapeModel("binary attributes with storage flags")).entityHashes["Photo"], photo)

        // A read-only property sets bit 4 of the property base's flags; a modifier follows them.
        let body = sha([sha([Data("body".utf8), le(UInt16(1 | 4))]), le(Int32(700))])
        let title = sha([sha([Data("title".utf8), le(UInt16(0)), Data("v2".utf8)]), le(Int32(700))])
        let folder = sha([
            sha([Data("folder".utf8), le(UInt16(1)), Data("moved".utf8)]), Data("Folder".utf8), Data("notes".utf8), le(Int32(1)),
            le(Int32(0)),
        ])
        let note = sha([Data("Note".utf8), Data([0]), body, folder, title])
        XCTAssertEqual(
            ModelVersionHashes(model: try Self.shapeModel("read-only properties and property hash modifiers")).entityHashes["Note"], note)
    }

    /// A relationship that is its own inverse does not hash its inverse's name (inferred).
    func testASelfInverseRelationshipHashesNoInverseName() {
        let schema = Schema(
            versionIdentifier: "1",
            entities: [
                Entity(
                    name: "Person", attributes: [], relationships: [Relationship("friends", to: "Person", inverse: "friends", toMany: true)]
                )
            ])
        var input = Data(SHA256.hash(data: Data("friends".utf8) + Data([0, 0])))
        input += Data("Person".utf8) + Data([0, 0, 0, 0]) + Data([0, 0, 0, 0])
        let entity = Data(SHA256.hash(data: Data("Person".utf8) + Data([0]) + Data(SHA256.hash(data: input))))
        XCTAssertEqual(ModelVersionHashes(declaration: schema).entityHashes["Person"], entity)
    }

    func testAnNSMutableArrayDefaultAndUnknownFlagBitsAreRead() throws {
        let model = try Self.shapeModel("NSArray default")
        var archive = try ModelCacheEncoder.archive(model)
        try mutateObjects(&archive) { objects in
            let mutable = UInt64(objects.count)
            objects.append(
                .dictionary([
                    "$classname": .string("NSMutableArray"),
                    "$classes": .array([.string("NSMutableArray"), .string("NSArray"), .string("NSObject")]),
                ]))
            let genres = try index(in: objects) { self.text($0["NSPropertyName"], objects) == "genres" }
            guard case .uid(let array)? = objects[genres]["NSDefaultValue"] else { throw XCTSkip("no default") }
            objects[Int(array)] = set(objects[Int(array)], "$class", .uid(mutable))
            objects[genres] = set(objects[genres], "NSFlagsKey", .integer(0x104))
        }
        let decoded = try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(archive))
        let genres = try XCTUnwrap(decoded.entity(named: "Playlist")?.attributes.first { $0.name == "genres" })
        XCTAssertEqual(genres.defaultValue, .array([.string("jazz"), .string("blues")]))
        XCTAssertTrue(genres.allowsExternalStorage)
        XCTAssertEqual(decoded.notes, ["attribute genres: NSFlagsKey 260 has bits of unknown meaning, not hashed"])
    }
}

extension ModelCacheTests {
    /// A store's model written as a schema file (`questbak schema STORE`) and read back hashes as
    /// the store's metadata does: abstractness, inheritance and the storage flags travel with it.
    func testASchemaFileOfTheStoresModelKeepsItsHashes() throws {
        for shape in ModelCacheShapes.all {
            let directory = try TemporaryTestDirectory()
            let file = directory.path("schema.json")
            try Schema(model: shape.store.model).jsonData().write(to: file)
            let schema = try Schema.load(from: file)
            XCTAssertEqual(ModelVersionHashes(declaration: schema), ModelVersionHashes(model: shape.store.model), shape.name)
        }
        let flags = try XCTUnwrap(ModelCacheShapes.all.first { $0.name == "binary attributes with storage flags" })
        let text = String(decoding: try Schema(model: flags.store.model).jsonData(), as: UTF8.self)
        XCTAssertTrue(text.contains(#""externalStorage""#) && text.contains(#""preservesValueOnDeletion""#), text)
    }
}

extension ModelCacheTests {
    /// A proxy whose underlying property is another proxy is followed to the description; a
    /// proxy that stands for itself is refused, naming the object, never followed forever.
    func testAProxyOfAProxyIsFollowedAndAProxyLoopIsRefused() throws {
        let model = try Self.shapeModel("abstract parent with inherited properties")
        func proxies(_ objects: [PropertyListValue], of entityName: String) throws -> [Int: String] {
            let entity = try index(in: objects) { self.text($0["NSEntityName"], objects) == entityName }
            var found: [Int: String] = [:]
            for (position, object) in objects.enumerated() where object["NSEntityDescription"] == .uid(UInt64(entity)) {
                guard case .uid(let underlying)? = object["NSUnderlyingProperty"] else { continue }
                found[position] = text(objects[Int(underlying)]["NSPropertyName"], objects)
            }
            return found
        }
        var chained = try ModelCacheEncoder.archive(model)
        var looped = chained
        try mutateObjects(&chained) { objects in
            let liquid = try XCTUnwrap(try proxies(objects, of: "Liquid").first { $0.value == "name" }?.key)
            let syrup = try XCTUnwrap(try proxies(objects, of: "Syrup").first { $0.value == "name" }?.key)
            objects[syrup] = set(objects[syrup], "NSUnderlyingProperty", .uid(UInt64(liquid)))
        }
        XCTAssertEqual(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(chained)), model)
        try mutateObjects(&looped) { objects in
            let syrup = try XCTUnwrap(try proxies(objects, of: "Syrup").first { $0.value == "name" }?.key)
            objects[syrup] = set(objects[syrup], "NSUnderlyingProperty", .uid(UInt64(syrup)))
        }
        XCTAssertThrowsError(try ModelCacheDecoder.decode(try ModelCacheEncoder.compress(looped))) { error in
            XCTAssertTrue("\(error.localizedDescription)".contains("nest deeper than"), error.localizedDescription)
        }
    }
}
