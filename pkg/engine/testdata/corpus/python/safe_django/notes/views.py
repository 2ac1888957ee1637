# safe: python.sqli.string-query python.xss.response python.redirect.open
from django.db import connection
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.views import View
from django.views.decorators.http import require_GET


def search(request):
    term = request.GET.get("q", "")
    with connection.cursor() as cursor:
        cursor.execute("SELECT title FROM notes WHERE title LIKE %s", ["%" + term + "%"])
        rows = cursor.fetchall()
    return render(request, "notes/search.html", {"rows": rows, "term": term})


class NoteView(View):
    def get(self, request, slug):
        banner = format_html("<h1>{}</h1>", slug)
        return HttpResponse(banner + "<p>" + escape(request.GET.get("note", "")) + "</p>")


@require_GET
def follow(request):
    return HttpResponseRedirect(reverse("notes:detail", args=[request.GET["next"]]))
