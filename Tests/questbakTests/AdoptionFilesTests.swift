import Foundation
import QuestBakTestSupport
import XCTest

/// What an app team copies to adopt the gate: the workflow in docs/ci parses as YAML and runs the
/// gate on a macOS runner, and `make install` on macOS uses Homebrew, never apt (its commands are
/// printed with `make -n`, since nothing here runs macOS).
final class AdoptionFilesTests: XCTestCase {
    func testTheWorkflowParsesAndRunsTheGateOnMacOS() throws {
        let workflow = Repository.root.appendingPathComponent("docs/ci/migration-gate.yml").path
        // Debian's python3 with python3-yaml (make deps installs it): a real YAML parser.
        let script = """
            import json, sys, yaml
            document = yaml.safe_load(open(sys.argv[1]))
            print(json.dumps({"jobs": {name: {"runs-on": job["runs-on"], "run": "\\n".join(step.get("run", "") for step in job["steps"])} for name, job in document["jobs"].items()}}))
            """
        let result = try Questbak.runTool(["/usr/bin/python3", "-c", script, workflow])
        XCTAssertEqual(result.status, 0, result.standardError)
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: [String: [String: String]]])
        let job = try XCTUnwrap(parsed["jobs"]?["migration-gate"])
        XCTAssertTrue(job["runs-on"]?.hasPrefix("macos") == true, "\(job)")
        let run = job["run"] ?? ""
        XCTAssertTrue(run.contains("make -C .questbak install"), run)
        XCTAssertTrue(run.contains("verify-migration --fixtures MigrationFixtures"), run)
        XCTAssertTrue(run.contains("--junit migration-gate.xml"), run)
    }

    func testMakeInstallOnMacOSUsesHomebrewAndItsKegOnlyLibarchive() throws {
        let darwin = try Questbak.runTool(["make", "-C", Repository.root.path, "-n", "install", "UNAME=Darwin", "PREFIX=/opt/example"])
        XCTAssertEqual(darwin.status, 0, darwin.standardError)
        let commands = darwin.standardOutput
        XCTAssertTrue(commands.contains("brew install"), commands)
        XCTAssertTrue(commands.contains(#"PKG_CONFIG_PATH="$(brew --prefix libarchive)/lib/pkgconfig"#), commands)
        XCTAssertTrue(commands.contains("swift build -c release --product questbak"), commands)
        XCTAssertTrue(commands.contains("/opt/example/bin/questbak"), commands)
        XCTAssertFalse(commands.contains("apt-get") || commands.contains("dpkg"), commands)
        let linux = try Questbak.runTool(["make", "-C", Repository.root.path, "-n", "install", "UNAME=Linux"])
        XCTAssertTrue(linux.standardOutput.contains("dpkg -s"), linux.standardOutput)
        XCTAssertFalse(linux.standardOutput.contains("brew"), linux.standardOutput)
    }
}
