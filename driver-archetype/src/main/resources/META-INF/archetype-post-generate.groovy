// archetype:generate does not keep file modes: the generated project's Maven Wrapper is made
// executable again, so that ./mvnw works as the project's README says
def mvnw = new File(new File(request.outputDirectory, request.artifactId), 'mvnw')
if (!mvnw.setExecutable(true, false)) {
    println "[WARNING] could not make ${mvnw} executable: run it as 'sh mvnw'"
}
