from memvault.cli import app

app(prog_name="memvault")
