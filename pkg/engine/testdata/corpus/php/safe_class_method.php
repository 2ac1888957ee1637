<?php
// safe: php.path.file-access
// The service reduces the name to its base name before the helper opens it.
class AttachmentService
{
    public function open($name)
    {
        $path = $this->directory() . '/' . basename($name);
        return self::load($path);
    }

    private function directory()
    {
        return '/var/app/attachments';
    }

    private static function load($path)
    {
        return file_get_contents($path);
    }
}

$service = new AttachmentService();
$content = $service->open($_POST['attachment']);
