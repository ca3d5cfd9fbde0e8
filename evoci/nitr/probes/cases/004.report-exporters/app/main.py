import sys

from src.report import export

if __name__ == "__main__":
    print(export("Sales", [("north", 12), ("south", 7)], sys.argv[1] if len(sys.argv) > 1 else "text"))
