"""blocks"""

if __name__ != "evoci.blocks":  # the folder is on sys.path (e.g. a test run from the repository root)
    raise ImportError(f"import evoci.blocks, not {__name__}: this folder is installed as evoci.blocks, and a second "
                      "copy of its modules would hold a second copy of every flow, task and setting")

