"""The dashboard's pages beyond the overview, one module per page, each with its own URLs
module included by dashboard/urls.py."""
