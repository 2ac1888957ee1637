from django.db import connection
from django.http import HttpResponse, HttpResponseRedirect
from django.utils.safestring import mark_safe
from django.views import View
from django.views.decorators.http import require_GET


def search(request):
    term = request.GET.get("q", "")
    with connection.cursor() as cursor:
        cursor.execute("SELECT title FROM notes WHERE title LIKE '%%" + term + "%%'")  # vuln: python.sqli.string-query
        rows = cursor.fetchall()
    return HttpResponse("<ul>" + "".join("<li>%s</li>" % r[0] for r in rows) + "</ul><p>" + term + "</p>")  # vuln: python.xss.response


class NoteView(View):
    def get(self, request, slug):
        banner = mark_safe("<h1>" + slug + "</h1>")  # vuln: python.xss.response
        return HttpResponse(banner)


@require_GET
def follow(request):
    return HttpResponseRedirect(request.GET["next"])  # vuln: python.redirect.open
