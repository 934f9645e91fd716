import Foundation

/// Debian's age 1.1.1 reads a passphrase only from a terminal: this runs a command on a
/// pseudo-terminal (Python's pty) and types `passphrase` at each of age's prompts.
public enum AgeOnATerminal {
    public static func run(_ arguments: [String], passphrase: String, in directory: URL) throws -> CommandResult {
        let typist = directory.appendingPathComponent("typist.py")
        try """
        import os, pty, sys
        passphrase = sys.argv[1].encode()
        pid, terminal = pty.fork()
        if pid == 0:
            os.execvp(sys.argv[2], sys.argv[2:])
        seen = b''
        answered = 0
        while True:
            try:
                data = os.read(terminal, 1024)
            except OSError:
                break
            if not data:
                break
            seen += data
            while seen.count(b'Enter passphrase') + seen.count(b'Confirm passphrase') > answered:
                os.write(terminal, passphrase + b'\\n')
                answered += 1
        _, status = os.waitpid(pid, 0)
        sys.stderr.write(seen.decode(errors='replace'))
        sys.exit(os.waitstatus_to_exitcode(status))
        """.write(to: typist, atomically: true, encoding: .utf8)
        return try Questbak.runTool(["python3", typist.path, passphrase] + arguments)
    }
}
