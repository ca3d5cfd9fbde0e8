# Shortcuts for the README's two commands (which need only bash).
.PHONY: demo test
demo:
	bash scripts/demo.sh
test:
	bash scripts/test.sh
