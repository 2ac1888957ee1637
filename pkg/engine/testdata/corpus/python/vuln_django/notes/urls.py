from django.urls import path

from . import views

urlpatterns = [
    path("notes/", views.search),
    path("notes/<str:slug>/", views.NoteView.as_view()),
    path("go/", views.follow),
]
