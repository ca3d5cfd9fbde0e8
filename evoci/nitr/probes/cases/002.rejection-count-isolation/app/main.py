from src import stats
from src.grader import Grader
from src.validator import Submission

if __name__ == "__main__":
    print(Grader().grade([Submission("ann", "answer"), Submission("bob", "")]), stats.accepted)
