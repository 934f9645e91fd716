import Foundation
import QuestBakTestSupport
import XCTest

/// The README's promises, checked: its exit-status table is questbak's own, every status in it
/// has a case that produces it, and every shell example runs as written.
final class DocumentationTests: XCTestCase {
    func readme() throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    func testTheReadmesExitStatusTableIsTheOneQuestbakPrints() throws {
        let table = try Questbak.run(["exit-statuses"]).standardOutput.trimmingCharacters(in: .newlines)
        XCTAssertTrue(try readme().contains(table), "README.md's table differs from `questbak exit-statuses`:\n\(table)")
        let manual = try String(contentsOf: Repository.root.appendingPathComponent("man/questbak.1"), encoding: .utf8)
        XCTAssertTrue(
            manual.contains(try Questbak.run(["exit-statuses", "--format", "mdoc"]).standardOutput.trimmingCharacters(in: .newlines)))
    }

    /// One case per documented status, run for real (1: `diff` of two stores that differ; as a
    /// failure of any other command it would be a bug).
    func testEveryDocumentedExitStatusHasACaseThatProducesIt() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let archive = directory.path("b.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
        let damaged = directory.path("damaged.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-anomalies").path, "-o", damaged.path, "-q"]).status, 0)
        var newer = ArchiveBuilder(schemaVersion: "3.0.0")
        newer.members = [.init("Routine", records: [])]
        let v3 = directory.path("v3.qbak")
        try newer.write(to: v3)
        let empty = directory.path("empty-folder")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        var checked: Set<Int32> = []
        func expect(
            _ status: Int32, _ arguments: [String], prefix: [String] = [], file: StaticString = #filePath, line: UInt = #line
        ) throws {
            let result = try Questbak.run(arguments, prefix: prefix)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.standardError)", file: file, line: line)
            checked.insert(status)
        }
        try expect(0, ["inspect", store.path])
        try expect(1, ["diff", store.path, damaged.path])
        try expect(2, ["import", damaged.path, "--validate"])
        try expect(3, ["verify-migration", "--fixtures", empty.path])
        try expect(64, ["expor", store.path])
        try expect(65, ["export", archive.path, "-o", directory.path("x.qbak").path])
        try expect(66, ["inspect", directory.path("missing.store").path])
        try expect(69, ["import", v3.path, "--validate"])
        try expect(73, ["export", store.path, "-o", archive.path])
        try expect(74, ["export", store.path, "-o", directory.path("big.qbak").path], prefix: ["prlimit", "--fsize=20000"])
        // 75: the app has the store open (an idle connection keeps its -wal and -shm).
        try whileHeldOpen(store) { try expect(75, ["import", archive.path, "--into", store.path, "--replace"]) }

        let documented = Set(
            try readme().split(separator: "\n").compactMap { line -> Int32? in
                let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                return cells.count == 3 ? Int32(cells[0]) : nil
            })
        XCTAssertEqual(documented.subtracting(checked), [], "every documented status has its case")
    }

    /// The README's ```sh examples, run as written and in order, each after the ones before it, as
    /// one script in one folder (HOME too), with questbak on PATH and the stores they name set up
    /// from the fixtures the README says they are copies of.
    func testEveryShellExampleInTheReadmeRunsInOrder() throws {
        let readme = try readme()
        let directory = try TemporaryTestDirectory()
        let home = directory.url
        try FileManager.default.createDirectory(at: home.appendingPathComponent("Backups"), withIntermediateDirectories: true)
        // Each placeholder, the README's words for it, and the fixture they name.
        let placeholders: [(path: String, readmeSays: String, fixture: String)] = [
            ("default.store", "the README's test uses copies of\n`Fixtures/v1-typical`", "v1-typical/default.store"),
            ("Backups/default.store", "the README's test uses copies of\n`Fixtures/v1-typical`", "v1-typical/default.store"),
            ("MyApp", "the README's test uses a copy of\n`Fixtures/AnyApp/kitchen-sink`", "AnyApp/kitchen-sink"),
        ]
        for placeholder in placeholders {
            XCTAssertTrue(readme.contains(placeholder.readmeSays), "the README says what \(placeholder.path) is: \(placeholder.readmeSays)")
            try FileManager.default.copyItem(
                at: Repository.fixtures.appendingPathComponent(placeholder.fixture), to: home.appendingPathComponent(placeholder.path))
        }
        // "Add questbak to your app's CI": the app's store in a simulator tree as Xcode lays it out,
        // and the new build's store.
        XCTAssertTrue(
            readme.contains(
                "test builds a simulator tree in `~/Library/Developer/CoreSimulator/Devices` holding a copy of\n`Fixtures/Gates/Ritualist/fixtures/v1-john`"
            ), "the README says what the simulator's store is")
        XCTAssertTrue(
            readme.contains("uses a copy of\n`Fixtures/Gates/Ritualist/next` as `NextBuild`"), "the README says what NextBuild is")
        let container = home.appendingPathComponent(
            "Library/Developer/CoreSimulator/Devices/0C8A5E0B-0000-4000-8000-000000000001/data/Containers/Data/Application/7D1F0000-0000-4000-8000-000000000002"
        )
        try FileManager.default.createDirectory(at: container.appendingPathComponent("Library"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("Gates/Ritualist/fixtures/v1-john"),
            to: container.appendingPathComponent("Library/Application Support"))
        try PropertyListSerialization.data(
            fromPropertyList: ["MCMMetadataIdentifier": "com.example.ritualist"], format: .binary, options: 0
        )
        .write(to: container.appendingPathComponent(".com.apple.mobile_container_manager.metadata.plist"))
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("Gates/Ritualist/next"), to: home.appendingPathComponent("NextBuild"))
        var blocks: [[String]] = []
        var current: [String]?
        // Fences and commands inside a list item are indented: the indentation is the list's, not the command's.
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "```sh" {
                current = []
            } else if trimmed == "```", let lines = current {
                blocks.append(lines)
                current = nil
            } else {
                current?.append(trimmed)
            }
        }
        // The first block is `make demo` / `make test`: the whole build, run by CI itself.
        let commands = blocks.dropFirst().flatMap { $0 }.filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") && !$0.isEmpty }
        XCTAssertGreaterThanOrEqual(commands.count, 12, "the README's examples were found")
        // One script: a command sees what the ones before it left, and the first that fails stops it.
        let bin = Questbak.executable.deletingLastPathComponent().path
        var script = "set -e\ncd '\(home.path)'\nexport HOME='\(home.path)' PATH='\(bin):'\"$PATH\"\n"
        for command in commands {
            script += "printf '%s\\n' \(Self.shellQuoted("+ " + command)) >&2\n\(command)\n"
        }
        let result = try Questbak.runTool(["sh", "-c", script])
        let failed = result.standardError.split(separator: "\n").last { $0.hasPrefix("+ ") } ?? "?"
        XCTAssertEqual(result.status, 0, "stopped at \(failed):\n\(result.standardError)")
        XCTAssertTrue(result.standardError.contains("+ " + (commands.last ?? "")), "every example ran")
    }

    static func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}
