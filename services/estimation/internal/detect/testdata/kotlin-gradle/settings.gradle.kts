rootProject.name = "notifier"
