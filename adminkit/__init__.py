"""The operator site's toolkit: what every app's ``admin.py`` uses and nothing of the domain —
read-only base pages, input filters, the counting-free paginator, money as shown, the template
filters, the operator roles (Django groups and permissions). It imports Django only, so any
floor's admin pages may stand on it."""
