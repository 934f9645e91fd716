import Foundation
import QuestBakKit

/// The gate's checks as JUnit XML, the format CI systems render as test results: one testsuite
/// per fixture, one testcase per check, a failure carrying the check's detail (for the model
/// invariants, the entity, `_pk` and property of each difference). The same checks and words as
/// `--json`, in another form. Written by hand: a few elements and attributes, escaped, need no
/// XML library.
enum JUnitReport {
    static func document(_ checks: [MigrationVerifier.Check], name: String) -> String {
        var fixtures: [String] = []
        var byFixture: [String: [MigrationVerifier.Check]] = [:]
        for check in checks {
            if byFixture[check.fixture] == nil { fixtures.append(check.fixture) }
            byFixture[check.fixture, default: []].append(check)
        }
        let failures = checks.filter { !$0.passed }.count
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<testsuites name="\#(escaped(name))" tests="\#(checks.count)" failures="\#(failures)">"#,
        ]
        for fixture in fixtures {
            let cases = byFixture[fixture] ?? []
            lines.append(
                #"  <testsuite name="\#(escaped(fixture))" tests="\#(cases.count)" failures="\#(cases.filter { !$0.passed }.count)">"#)
            for check in cases {
                let opening = #"    <testcase classname="\#(escaped(fixture))" name="\#(escaped(check.name))""#
                if check.passed {
                    lines.append(opening + "/>")
                } else {
                    let message = check.detail.split(separator: "\n").first.map(String.init) ?? check.name
                    lines.append(opening + ">")
                    lines.append(#"      <failure message="\#(escaped(message))">\#(escaped(check.detail))</failure>"#)
                    lines.append("    </testcase>")
                }
            }
            lines.append("  </testsuite>")
        }
        lines.append("</testsuites>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text as XML character data or an attribute value. Characters XML 1.0 cannot hold at all
    /// (most control characters) are written as `\u{…}`, as questbak prints them elsewhere.
    static func escaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "\n", "\t": output.unicodeScalars.append(scalar)
            case "\r": output += "&#13;"
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) {
                    output += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }
}
