import Foundation
import QuestBakKit
import XCTest

/// A repair rule runs only if it is registered (`RepairPipeline`), and the migration verifier
/// excuses only the changes of registered rules: a rule type written and not registered would be
/// dead code that looks alive. The rule types are found in the sources themselves.
final class RepairRuleRegistryTests: XCTestCase {
    static let rulesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/QuestBakKit/Rules")

    /// Every type declared under Rules/ that is a rule (its name ends in `Rule`, or it conforms
    /// to a rule protocol), with the file it is declared in.
    static func declaredRuleTypes() throws -> [(name: String, file: String)] {
        let declaration = try NSRegularExpression(
            pattern:
                #"^\s*(?:(?:public|package|internal|private|fileprivate|final)\s+)*(?:struct|enum|class|actor|extension)\s+(\w+)\s*(:[^{]*)?\{"#,
            options: [.anchorsMatchLines])
        var found: [(String, String)] = []
        let files = FileManager.default.enumerator(at: rulesFolder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        // The protocol a rule conforms to, and an extension of it, are no rule.
        let protocolDeclaration = try NSRegularExpression(
            pattern: #"^\s*(?:(?:public|package|internal)\s+)?protocol\s+(\w+)"#, options: [.anchorsMatchLines])
        var protocols: Set<String> = []
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in protocolDeclaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                protocols.insert((text as NSString).substring(with: match.range(at: 1)))
            }
        }
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = (text as NSString).substring(with: match.range(at: 1))
                let conformances = match.range(at: 2).location == NSNotFound ? "" : (text as NSString).substring(with: match.range(at: 2))
                let conformsToARule = conformances.range(of: #"\bRepairRule\b"#, options: .regularExpression) != nil
                // (`RepairEntry.Rule`, the log's vocabulary, is no rule.)
                guard !protocols.contains(name) else { continue }
                if (name.hasSuffix("Rule") && name != "Rule") || conformsToARule { found.append((name, file.lastPathComponent)) }
            }
        }
        return found
    }

    func testEveryRuleTypeUnderRulesIsRegistered() throws {
        let declared = try Self.declaredRuleTypes()
        // A folder moved or renamed must fail here, not pass with nothing to check.
        XCTAssertGreaterThanOrEqual(declared.count, 6, "rule types found under \(Self.rulesFolder.path): \(declared.map(\.name))")
        let registered = RepairPipeline.registeredRuleNames
        for (name, file) in declared {
            XCTAssertTrue(registered.contains(name), "\(name) (\(file)) is a repair rule type but not registered in RepairPipeline")
        }
        XCTAssertEqual(Set(registered), Set(declared.map(\.name)), "every registered rule is declared under Rules/")
        XCTAssertEqual(registered.count, Set(registered).count, "a rule is registered once")
    }

    func testEachRuleHasAFileOfItsOwn() throws {
        for (name, file) in try Self.declaredRuleTypes() {
            XCTAssertEqual(file, name + ".swift", "\(name) is declared in \(file), not a file of its own")
        }
    }
}
