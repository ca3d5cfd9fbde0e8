from src.config import TransferConfig
from src.transfer import fetch

if __name__ == "__main__":
    print(fetch("mem://greeting", lambda url, timeout: b"hello", TransferConfig()))
