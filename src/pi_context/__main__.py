from pi_context.cli import console

console()
