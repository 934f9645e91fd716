import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

/// `make man-check` compares man/questbak.1 byte for byte with what generate-manual makes; this
/// test, part of `swift test`, checks that every subcommand, option and help text the binary
/// declares is in the committed page, so `--help` and `man questbak` cannot drift apart.
final class ManPageTests: XCTestCase {
    func testManPageDocumentsEveryCommandAndOption() throws {
        let page = try String(contentsOf: Repository.root.appendingPathComponent("man/questbak.1"), encoding: .utf8)
        let dump = try Questbak.run(["--experimental-dump-help"])
        XCTAssertEqual(dump.status, 0)
        let root = try XCTUnwrap((try JSONSerialization.jsonObject(with: dump.outputData) as? [String: Any])?["command"] as? [String: Any])
        func check(_ command: [String: Any]) {
            let name = command["commandName"] as? String ?? "?"
            if let abstract = command["abstract"] as? String {
                XCTAssertTrue(page.contains(abstract), "man page lacks the abstract of \(name)")
            }
            if let discussion = command["discussion"] as? String {
                for paragraph in discussion.components(separatedBy: "\n\n") {
                    XCTAssertTrue(
                        page.contains(paragraph.trimmingCharacters(in: .whitespacesAndNewlines)), "man page lacks the discussion of \(name)"
                    )
                }
            }
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool != false {
                if let abstract = argument["abstract"] as? String {
                    XCTAssertTrue(page.contains(abstract), "man page lacks \(name) \(argument["valueName"] ?? "")")
                }
                for spelling in argument["names"] as? [[String: Any]] ?? [] {
                    guard let text = spelling["name"] as? String, spelling["kind"] as? String == "long" else { continue }
                    XCTAssertTrue(page.contains("Fl -\(text)") || page.contains(", -\(text)"), "man page lacks --\(text) of \(name)")
                }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] {
                if let subname = subcommand["commandName"] as? String {
                    XCTAssertTrue(page.contains(".It Em \(subname)"), "man page lacks the subcommand \(subname)")
                }
                check(subcommand)
            }
        }
        check(root)
        // Under EXIT STATUS, not in DESCRIPTION: one item per status (DocumentationTests checks the words).
        let exitStatus = try XCTUnwrap(page.range(of: ".Sh \"EXIT STATUS\"")).upperBound
        for status in [0, 1, 2, 3, 64, 65, 66, 69, 73, 74, 75] {
            XCTAssertTrue(page[exitStatus...].contains(".It \(status)\n"), "EXIT STATUS lists \(status)")
        }
    }

    /// The sections a man page has beyond what generate-manual writes, in mdoc's order, and no
    /// mdoc warning (`make man-check` runs the same groff check).
    func testManPageHasExamplesEnvironmentFilesAndSeeAlsoWithoutMdocWarnings() throws {
        let path = Repository.root.appendingPathComponent("man/questbak.1").path
        let page = try String(contentsOfFile: path, encoding: .utf8)
        let headings = page.split(separator: "\n").filter { $0.hasPrefix(".Sh ") }.map {
            $0.dropFirst(4).replacingOccurrences(of: "\"", with: "")
        }
        XCTAssertEqual(
            headings, ["NAME", "SYNOPSIS", "DESCRIPTION", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"])
        for text in ["Ev SOURCE_DATE_EPOCH", "Ev QUESTBAK_RECORD", "Pa STORE.questbak-backup-<time>", "questbak export "] {
            XCTAssertTrue(page.contains(text), "the man page has \(text)")
        }
        let groff = try Questbak.runTool(["sh", "-c", "command -v groff"])
        guard groff.status == 0 else { throw XCTSkip("groff is not installed (make deps installs it)") }
        let warnings = try Questbak.runTool(["groff", "-ww", "-z", "-mandoc", path])
        XCTAssertEqual(warnings.status, 0)
        XCTAssertEqual(warnings.standardError, "", "groff -ww -z -mandoc man/questbak.1 warns")
    }
}
