import Foundation
import QuestBakTestSupport
import XCTest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `verify-migration --junit FILE`: the gate's checks as JUnit XML, one testcase per fixture and
/// check, the same checks, verdicts and details as `--json`.
final class JUnitReportTests: XCTestCase {
    func gate(_ directory: TemporaryTestDirectory, _ extra: [String]) throws -> CommandResult {
        let fixtures = directory.path("Ritualist/fixtures").path
        let next = directory.path("Ritualist/next/default.store").path
        return try Questbak.run(["verify-migration", "--fixtures", fixtures, "--to", next] + extra)
    }

    func testTheChecksAsJUnitAgreeWithJSONPassingAndFailing() throws {
        let directory = try TemporaryTestDirectory()
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("Gates/Ritualist"), to: directory.path("Ritualist"))
        for failing in [false, true] {
            if failing {
                // A value the golden dump does not hold, with characters XML must escape.
                try Questbak.runTool([
                    "sqlite3", directory.path("Ritualist/fixtures/v1-john/default.store").path,
                    "UPDATE ZHABIT SET ZNAME = ZNAME || ' <&\">' WHERE Z_PK = 1",
                ])
            }
            let report = directory.path("junit-\(failing).xml")
            let result = try gate(directory, ["--junit", report.path])
            XCTAssertEqual(result.status, failing ? 3 : 0, result.standardOutput + result.standardError)
            let checks = try XCTUnwrap(
                try JSONSerialization.jsonObject(with: try gate(directory, ["--json"]).outputData) as? [[String: Any]])
            let document = try XMLDocument(data: Data(contentsOf: report))
            let cases = try document.nodes(forXPath: "/testsuites/testsuite/testcase").compactMap { $0 as? XMLElement }
            XCTAssertEqual(cases.count, checks.count)
            XCTAssertEqual(
                try document.nodes(forXPath: "/testsuites/@failures").first?.stringValue,
                String(checks.filter { $0["passed"] as? Bool == false }.count))
            for (element, check) in zip(cases, checks) {
                XCTAssertEqual(element.attribute(forName: "classname")?.stringValue, check["fixture"] as? String)
                XCTAssertEqual(element.attribute(forName: "name")?.stringValue, check["name"] as? String)
                let failure = element.elements(forName: "failure").first
                XCTAssertEqual(failure == nil, check["passed"] as? Bool)
                if let failure { XCTAssertEqual(failure.stringValue, check["detail"] as? String) }
            }
            XCTAssertEqual(failing, cases.contains { ($0.elements(forName: "failure").first?.stringValue ?? "").contains("<&\\\">") })
        }
    }

    /// The report file is opened before the work: a folder that cannot hold it stops the gate.
    func testAReportThatCannotBeWrittenStopsTheGateFirst() throws {
        let directory = try TemporaryTestDirectory()
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("Gates/Ritualist"), to: directory.path("Ritualist"))
        let result = try gate(directory, ["--junit", directory.path("absent/report.xml").path])
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertFalse(result.standardOutput.contains("ok "), result.standardOutput)
    }
}
