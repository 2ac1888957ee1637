plugins { kotlin("jvm") version "1.9.21" }

dependencies {
    implementation("io.ktor:ktor-server-core:2.3.7")
    implementation("io.ktor:ktor-server-netty:2.3.7")
    implementation("org.postgresql:postgresql:42.7.1")
}
