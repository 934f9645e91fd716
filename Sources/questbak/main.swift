// The questbak executable: the command line lives in QuestBakCLI, so it can be tested in process.
import QuestBakCLI

CommandLineTool.main()
