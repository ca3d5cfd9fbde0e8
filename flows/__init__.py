"""flows"""

if __name__ != "evoci.flows":  # the folder is on sys.path (e.g. a test run from the repository root)
    raise ImportError(f"import evoci.flows, not {__name__}: this folder is installed as evoci.flows, and a second "
                      "copy of its modules would hold a second copy of every flow, task and setting")

