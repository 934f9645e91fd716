import Foundation

/// What is wrong with a keyed archive, and where: the index of the object in `$objects` and the
/// key of that object being read, when there is one.
package struct KeyedArchiveError: Error, LocalizedError, Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        /// The top level is not an `NSKeyedArchiver` archive (no `$objects`, wrong `$archiver`…).
        case notAKeyedArchive(String)
        /// No `$top`, or no `root` in it.
        case missingTop
        /// A UID points past the end of `$objects`.
        case uidOutOfRange(uid: UInt64, objectCount: Int)
        /// Following references comes back to an object already being read (the indexes, in order).
        case cycle(path: [Int])
        /// References nest deeper than the limit.
        case tooDeep(limit: Int)
        /// An object has no usable `$class`.
        case missingClass(String)
        /// An object is not of the class the key must hold.
        case wrongClass(expected: String, found: String)
        /// A value is not of the plist type the key must hold.
        case wrongType(expected: String, found: String)
        /// A key that must be present is absent (or `$null`).
        case missingKey
        /// A value of the right type that makes no sense (a negative count, a UUID of 3 bytes…).
        case invalidValue(String)
    }

    package var kind: Kind
    package var objectIndex: Int?
    package var key: String?

    package init(_ kind: Kind, objectIndex: Int? = nil, key: String? = nil) {
        self.kind = kind
        self.objectIndex = objectIndex
        self.key = key
    }

    package var errorDescription: String? {
        let problem: String
        switch kind {
        case .notAKeyedArchive(let reason): problem = "not a keyed archive: \(reason)"
        case .missingTop: problem = "no $top.root"
        case .uidOutOfRange(let uid, let count): problem = "UID \(uid) out of range (\(count) objects)"
        case .cycle(let path): problem = "reference cycle through objects \(path.map(String.init).joined(separator: " → "))"
        case .tooDeep(let limit): problem = "references nest deeper than \(limit)"
        case .missingClass(let reason): problem = "object has no class: \(reason)"
        case .wrongClass(let expected, let found): problem = "expected \(expected), found \(found.debugDescription.prefix(80))"
        case .wrongType(let expected, let found): problem = "expected \(expected), found \(found)"
        case .missingKey: problem = "required key missing"
        case .invalidValue(let reason): problem = reason
        }
        var place: [String] = []
        if let objectIndex { place.append("object \(objectIndex)") }
        if let key { place.append("key \(key.debugDescription.prefix(80))") }
        return "invalid keyed archive: \(problem)" + (place.isEmpty ? "" : " (\(place.joined(separator: ", ")))")
    }
}

/// One archived object: a dictionary of `$objects` with a `$class`.
package struct ArchivedObject: Sendable {
    package var index: Int
    package var className: String
    /// `$classes`: the class and its ancestors, most derived first.
    package var classChain: [String]
    package var fields: [String: PropertyListValue]

    package func isKind(of name: String) -> Bool { className == name || classChain.contains(name) }
}

/// A value reached through a reference: `$null`, a plain plist value (strings, numbers, data),
/// or an archived object.
package enum ArchivedValue: Sendable {
    case null
    case plain(PropertyListValue)
    case object(ArchivedObject)
}

/// A reader of an `NSKeyedArchiver` archive, already decoded from its binary property list.
///
/// Nothing is resolved eagerly: object graphs such as a compiled model refer back to their
/// parents (entity → model, property → entity), so a caller follows only the references it
/// means to, and `visiting` refuses to enter an object it is already inside. Every failure is a
/// `KeyedArchiveError` naming the object index and key.
package final class KeyedArchive {
    package static let maximumDepth = 64

    package let objects: [PropertyListValue]
    package let rootIndex: Int
    private var active: [Int] = []

    package init(_ archive: PropertyListValue) throws(KeyedArchiveError) {
        guard case .dictionary = archive else { throw KeyedArchiveError(.notAKeyedArchive("the top level is not a dictionary")) }
        if let archiver = archive["$archiver"] {
            guard case .string("NSKeyedArchiver") = archiver else {
                throw KeyedArchiveError(.notAKeyedArchive("$archiver is \(Self.describe(archiver))"), key: "$archiver")
            }
        }
        guard case .array(let objects)? = archive["$objects"] else {
            throw KeyedArchiveError(.notAKeyedArchive("no $objects array"), key: "$objects")
        }
        guard case .string("$null")? = objects.first else {
            throw KeyedArchiveError(.notAKeyedArchive("$objects[0] is not \"$null\""), objectIndex: 0)
        }
        guard case .dictionary? = archive["$top"], let root = archive["$top"]?["root"] else {
            throw KeyedArchiveError(.missingTop, key: "$top")
        }
        guard case .uid(let uid) = root else {
            throw KeyedArchiveError(.wrongType(expected: "a UID", found: Self.describe(root)), key: "$top.root")
        }
        guard uid < UInt64(objects.count) else {
            throw KeyedArchiveError(.uidOutOfRange(uid: uid, objectCount: objects.count), key: "$top.root")
        }
        guard uid != 0 else { throw KeyedArchiveError(.missingTop, key: "$top.root") }
        self.objects = objects
        self.rootIndex = Int(uid)
    }

    /// Reads a keyed archive from binary property list bytes.
    package convenience init(data: Data) throws {
        try self.init(try BinaryPropertyList.decode(data))
    }

    package func rootObject() throws(KeyedArchiveError) -> ArchivedObject {
        guard case .object(let object) = try resolve(.uid(UInt64(rootIndex)), from: nil, key: "$top.root") else {
            throw KeyedArchiveError(.wrongType(expected: "an archived object", found: Self.describe(objects[rootIndex])), key: "$top.root")
        }
        return object
    }

    // MARK: Resolving references

    /// Resolves a field value: a UID is looked up in `$objects`, anything else is a plain inline value.
    package func resolve(_ reference: PropertyListValue, from objectIndex: Int?, key: String?) throws(KeyedArchiveError) -> ArchivedValue {
        guard case .uid(let uid) = reference else { return .plain(reference) }
        guard uid < UInt64(objects.count) else {
            throw KeyedArchiveError(.uidOutOfRange(uid: uid, objectCount: objects.count), objectIndex: objectIndex, key: key)
        }
        if uid == 0 { return .null }
        let index = Int(uid)
        let target = objects[index]
        guard case .dictionary(let fields) = target, let classReference = fields["$class"] else { return .plain(target) }
        guard case .uid(let classUID) = classReference else {
            throw KeyedArchiveError(.missingClass("$class is \(Self.describe(classReference))"), objectIndex: index, key: "$class")
        }
        guard classUID < UInt64(objects.count) else {
            throw KeyedArchiveError(.uidOutOfRange(uid: classUID, objectCount: objects.count), objectIndex: index, key: "$class")
        }
        let classInfo = objects[Int(classUID)]
        guard case .string(let className)? = classInfo["$classname"] else {
            throw KeyedArchiveError(.missingClass("object \(classUID) has no $classname"), objectIndex: index, key: "$class")
        }
        var chain: [String] = []
        if case .array(let names)? = classInfo["$classes"] {
            for name in names {
                guard case .string(let text) = name else {
                    throw KeyedArchiveError(
                        .missingClass("$classes of object \(classUID) holds \(Self.describe(name))"), objectIndex: index)
                }
                chain.append(text)
            }
        }
        if chain.isEmpty { chain = [className] }
        var objectFields = fields
        objectFields["$class"] = nil
        return .object(ArchivedObject(index: index, className: className, classChain: chain, fields: objectFields))
    }

    /// Runs `body` inside object `index`, refusing to enter it again (a cycle) or to nest too deep.
    package func visiting<T>(_ index: Int, key: String?, _ body: () throws -> T) throws -> T {
        if let position = active.firstIndex(of: index) {
            throw KeyedArchiveError(.cycle(path: Array(active[position...]) + [index]), objectIndex: index, key: key)
        }
        guard active.count < Self.maximumDepth else {
            throw KeyedArchiveError(.tooDeep(limit: Self.maximumDepth), objectIndex: index, key: key)
        }
        active.append(index)
        defer { active.removeLast() }
        return try body()
    }

    // MARK: Reading fields

    /// The object a key refers to, or nil when the key is absent or `$null`.
    package func object(_ key: String, of owner: ArchivedObject) throws(KeyedArchiveError) -> ArchivedObject? {
        guard let reference = owner.fields[key] else { return nil }
        switch try resolve(reference, from: owner.index, key: key) {
        case .null: return nil
        case .object(let object): return object
        case .plain(let value):
            throw KeyedArchiveError(
                .wrongType(expected: "an archived object", found: Self.describe(value)), objectIndex: owner.index, key: key)
        }
    }

    /// The object a key refers to, which must be of (or derive from) one of `classNames`.
    package func object(_ key: String, of owner: ArchivedObject, kindOf classNames: [String]) throws(KeyedArchiveError) -> ArchivedObject? {
        guard let object = try object(key, of: owner) else { return nil }
        guard classNames.contains(where: object.isKind(of:)) else {
            throw KeyedArchiveError(
                .wrongClass(expected: classNames.joined(separator: " or "), found: object.className), objectIndex: owner.index, key: key)
        }
        return object
    }

    /// A string: a plain plist string, or an `NSString`/`NSMutableString` object with `NS.string`.
    /// Nil when the key is absent or `$null`.
    package func string(_ key: String, of owner: ArchivedObject) throws(KeyedArchiveError) -> String? {
        guard let reference = owner.fields[key] else { return nil }
        return try stringValue(reference, from: owner.index, key: key)
    }

    package func requiredString(_ key: String, of owner: ArchivedObject) throws(KeyedArchiveError) -> String {
        guard let text = try string(key, of: owner) else { throw KeyedArchiveError(.missingKey, objectIndex: owner.index, key: key) }
        return text
    }

    /// A reference (or inline value) read as a string; nil for `$null`.
    package func stringValue(_ reference: PropertyListValue, from objectIndex: Int?, key: String?) throws(KeyedArchiveError) -> String? {
        switch try resolve(reference, from: objectIndex, key: key) {
        case .null: return nil
        case .plain(.string(let text)): return text
        case .plain(let value):
            throw KeyedArchiveError(.wrongType(expected: "a string", found: Self.describe(value)), objectIndex: objectIndex, key: key)
        case .object(let object):
            guard object.isKind(of: "NSString") || object.isKind(of: "NSMutableString") else {
                throw KeyedArchiveError(.wrongClass(expected: "NSString", found: object.className), objectIndex: objectIndex, key: key)
            }
            // NS.string is stored inline; a UID to a plain string is accepted, nothing further.
            var inner = object.fields["NS.string"]
            if case .uid(let uid)? = inner, uid > 0, uid < UInt64(objects.count) { inner = objects[Int(uid)] }
            guard case .string(let text)? = inner else {
                throw KeyedArchiveError(
                    .wrongType(expected: "a string", found: inner.map(Self.describe) ?? "nothing"), objectIndex: object.index,
                    key: "NS.string")
            }
            return text
        }
    }

    /// An integer (NSNumber: a plain plist integer, inline or referenced). Nil when absent or `$null`.
    package func integer(_ key: String, of owner: ArchivedObject) throws(KeyedArchiveError) -> Int64? {
        guard let reference = owner.fields[key] else { return nil }
        switch try resolve(reference, from: owner.index, key: key) {
        case .null: return nil
        case .plain(.integer(let number)): return number
        case .plain(let value):
            throw KeyedArchiveError(.wrongType(expected: "an integer", found: Self.describe(value)), objectIndex: owner.index, key: key)
        case .object(let object):
            throw KeyedArchiveError(.wrongType(expected: "an integer", found: "an \(object.className)"), objectIndex: owner.index, key: key)
        }
    }

    /// A flag: a plist boolean, or the integer 0 or 1. Nil when absent or `$null`.
    package func flag(_ key: String, of owner: ArchivedObject) throws(KeyedArchiveError) -> Bool? {
        guard let reference = owner.fields[key] else { return nil }
        switch try resolve(reference, from: owner.index, key: key) {
        case .null: return nil
        case .plain(.boolean(let flag)): return flag
        case .plain(.integer(let number)) where number == 0 || number == 1: return number == 1
        case .plain(let value):
            throw KeyedArchiveError(.wrongType(expected: "a boolean", found: Self.describe(value)), objectIndex: owner.index, key: key)
        case .object(let object):
            throw KeyedArchiveError(.wrongType(expected: "a boolean", found: "an \(object.className)"), objectIndex: owner.index, key: key)
        }
    }

    /// Class names whose archives list their members under `NS.objects`.
    package static let collectionClassNames = ["NSArray", "NSSet", "NSOrderedSet"]

    /// The member references of an `NSArray`/`NSSet`/`NSOrderedSet` (or an inline plist array).
    /// Nil when the key is absent or `$null`.
    package func elements(_ key: String, of owner: ArchivedObject) throws(KeyedArchiveError) -> [PropertyListValue]? {
        guard let reference = owner.fields[key] else { return nil }
        switch try resolve(reference, from: owner.index, key: key) {
        case .null: return nil
        case .plain(.array(let members)): return members
        case .plain(let value):
            throw KeyedArchiveError(
                .wrongType(expected: "an array or set", found: Self.describe(value)), objectIndex: owner.index, key: key)
        case .object(let collection):
            return try members(of: collection, from: owner.index, key: key)
        }
    }

    /// The member references of a collection object.
    package func members(
        of collection: ArchivedObject, from objectIndex: Int?, key: String?
    ) throws(KeyedArchiveError) -> [PropertyListValue] {
        guard Self.collectionClassNames.contains(where: collection.isKind(of:)) else {
            throw KeyedArchiveError(
                .wrongClass(expected: "NSArray or NSSet", found: collection.className), objectIndex: objectIndex, key: key)
        }
        guard case .array(let members)? = collection.fields["NS.objects"] else {
            throw KeyedArchiveError(
                .wrongType(expected: "an array", found: collection.fields["NS.objects"].map(Self.describe) ?? "nothing"),
                objectIndex: collection.index, key: "NS.objects")
        }
        return members
    }

    /// The key and value references of an `NSDictionary`, in archived order. Nil when absent or `$null`.
    package func entries(
        _ key: String, of owner: ArchivedObject
    ) throws(KeyedArchiveError) -> [(key: PropertyListValue, value: PropertyListValue)]? {
        guard let object = try object(key, of: owner) else { return nil }
        return try entries(of: object, from: owner.index, key: key)
    }

    package func entries(
        of dictionary: ArchivedObject, from objectIndex: Int?, key: String?
    ) throws(KeyedArchiveError) -> [(
        key: PropertyListValue, value: PropertyListValue
    )] {
        guard dictionary.isKind(of: "NSDictionary") else {
            throw KeyedArchiveError(.wrongClass(expected: "NSDictionary", found: dictionary.className), objectIndex: objectIndex, key: key)
        }
        guard case .array(let keys)? = dictionary.fields["NS.keys"] else {
            throw KeyedArchiveError(.wrongType(expected: "an array", found: "nothing"), objectIndex: dictionary.index, key: "NS.keys")
        }
        guard case .array(let values)? = dictionary.fields["NS.objects"] else {
            throw KeyedArchiveError(.wrongType(expected: "an array", found: "nothing"), objectIndex: dictionary.index, key: "NS.objects")
        }
        guard keys.count == values.count else {
            throw KeyedArchiveError(
                .invalidValue("\(keys.count) keys and \(values.count) values"), objectIndex: dictionary.index, key: "NS.objects")
        }
        return zip(keys, values).map { (key: $0, value: $1) }
    }

    /// A short description of a plist value's type, for error messages.
    package static func describe(_ value: PropertyListValue) -> String {
        switch value {
        case .boolean(let flag): "the boolean \(flag)"
        case .integer(let number): "the integer \(number)"
        case .real(let number): "the real \(number)"
        case .string(let text): "the string \(text.debugDescription.prefix(80))"
        case .data(let bytes): "\(bytes.count) bytes of data"
        case .array(let elements): "an array of \(elements.count)"
        case .dictionary(let entries): "a dictionary of \(entries.count) keys"
        case .uid(let uid): "the UID \(uid)"
        }
    }
}
