from django.urls import path

from observability import views

urlpatterns = [path("metrics", views.metrics, name="metrics")]
