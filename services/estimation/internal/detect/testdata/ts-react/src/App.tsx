import React from 'react';

export function App() {
  return <h1>Dashboard</h1>;
}
