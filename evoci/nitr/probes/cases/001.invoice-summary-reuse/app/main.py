from src.invoice import Invoice
from src.money import format_cents

if __name__ == "__main__":
    invoice = Invoice("ACME")
    invoice.add("Consulting", 150000)
    invoice.add("Travel", 23450)
    print(invoice.customer, format_cents(invoice.total_cents()))
